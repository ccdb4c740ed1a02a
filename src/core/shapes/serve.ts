// The stream `lbot serve --json` and `lbot dev --json` print: `serve.ready`, then (with hot reload) one line
// per dev event, the results of runs as StreamItem lines.
import { z } from 'zod';
import { StreamItemSchema } from './stream.js';
import { defineShape } from './shape.js';

const ServeReadySchema = z.strictObject({
  type: z.literal('serve.ready'),
  url: z.string(),
  port: z.number().int(),
  token_file: z.string().nullable(),
  dev: z.literal(true).optional(),
});

const DevLineSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('dev.ready'), url: z.string(), plugins: z.array(z.strictObject({ identity: z.string(), dir: z.string() })) }),
  z.strictObject({ type: z.literal('dev.changed'), plugin_dir: z.string(), paths: z.array(z.string()) }),
  z.strictObject({ type: z.literal('dev.reloading'), plugin: z.string() }),
  z.strictObject({ type: z.literal('dev.reloaded'), plugin: z.string(), generation: z.number().int(), ms: z.number() }),
  z.strictObject({ type: z.literal('dev.reload_failed'), plugin: z.string(), dir: z.string(), error: z.string() }),
  z.strictObject({ type: z.literal('dev.plugin_removed'), plugin: z.string(), dir: z.string() }),
  z.strictObject({ type: z.literal('dev.event_file'), file: z.string() }),
  z.strictObject({ type: z.literal('dev.warning'), message: z.string() }),
  z.strictObject({ type: z.literal('run.started'), run_id: z.string(), runner_id: z.string(), event_id: z.string(), event_type: z.string() }),
  z.strictObject({
    type: z.literal('api.call'),
    run_id: z.string(),
    action: z.string(),
    ok: z.boolean(),
    code: z.string().nullable(),
    message: z.string().nullable(),
  }),
]);

export const ServeLine = defineShape(
  'ServeLine',
  'stream',
  'a line of `serve --json` / `dev --json`: serve.ready, a dev event (dev.*, run.started, api.call) or a StreamItem of a run',
  z.union([ServeReadySchema, DevLineSchema, StreamItemSchema]),
);

export const ServeToken = defineShape(
  'ServeToken',
  'item',
  'the bearer token of lbot serve (`serve token`); `file` is null when it comes from LBOT_API_TOKEN',
  z.strictObject({ token: z.string(), file: z.string().nullable(), rotated: z.boolean() }),
);

export const WorkerLine = defineShape(
  'WorkerLine',
  'stream',
  'the line `lbot worker --json` prints once it claims runs from the queue',
  z.strictObject({ type: z.literal('worker.ready'), worker_id: z.string(), concurrency: z.number().int(), lease_seconds: z.number() }),
);
