// The request a worker runs, as run_queue.request_json holds it. The binding's env is left out: secrets never
// go into the queue, and the worker takes the env of the binding with that id from its own config.
import { z } from 'zod';
import type { Config } from '../../core/config.js';
import { parseEnvelope } from '../../core/host/event-input.js';
import { BindingSchema } from '../../core/protocol/binding.js';
import { parseOrThrow } from '../../core/zod-issue.js';
import { isRecord, tryParseJson } from '../../core/json.js';
import type { StartRequest } from '../server/run-gateway.js';

const QueuedRequestSchema = z.object({ event: z.unknown(), binding: z.unknown(), raw: z.unknown().optional() });

export function encodeRequest(req: StartRequest): string {
  const { env: _env, ...binding } = req.binding;
  return JSON.stringify({ event: req.event, binding, ...(req.raw === undefined ? {} : { raw: req.raw }) });
}

/** The queued request, validated as the HTTP body it came from was; throws invalid_argument on a bad row. */
export function decodeRequest(json: string, config: Config): StartRequest {
  const body = parseOrThrow(QueuedRequestSchema, tryParseJson(json), 'queued run', '(run_queue.request_json)');
  const event = parseEnvelope(body.event, 'queued run event', config.runs.max_event_data_bytes);
  const given = parseOrThrow(BindingSchema, { ...(isRecord(body.binding) ? body.binding : {}), env: {} }, 'queued run binding', '(run_queue.request_json)');
  const configured = config.bindings.find((b) => b.binding_id === given.binding_id && b.runner_id === given.runner_id);
  const binding = { ...given, env: configured?.env ?? {} };
  return { event, binding, ...(body.raw === undefined ? {} : { raw: body.raw }) };
}
