// One event into one run through the configured bindings, for webhooks, long polling and schedules.
import type { Config } from '../../core/config.js';
import { LbotError } from '../../core/errors.js';
import { dispatch } from '../../core/host/dispatch.js';
import { incomingEventRow } from '../../core/host/event-record.js';
import type { Binding } from '../../core/protocol/binding.js';
import type { EventEnvelope } from '../../core/protocol/event.js';
import type { HostStores } from '../stores/open.js';
import type { RunGateway } from './run-gateway.js';

export type EventRouterDeps = { stores: HostStores; runs: RunGateway; config(): Config };

/** Starts the run of the binding that handles `envelope`; no match still records the event (AC-174). */
export async function startEventRun(deps: EventRouterDeps, envelope: EventEnvelope, raw?: unknown): Promise<string> {
  let binding: Binding;
  try {
    binding = dispatch({ event: envelope, config: deps.config() });
  } catch (err) {
    if (err instanceof LbotError && err.code === 'binding.not_found') await deps.stores.events.append(incomingEventRow(envelope, null, null));
    throw err;
  }
  return deps.runs.start({ event: envelope, binding, ...(raw === undefined ? {} : { raw }) });
}
