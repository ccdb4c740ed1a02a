// The one shape of a result-stream line: what `lbot run --json` prints and what GET /v1/runs/:id/results
// streams (NDJSON or SSE). Delivered results carry their payload under `data`, observed notices say so,
// and every run ends with one `run.summary`.
import { MessageChunkSchema, MessageSchema, type Message, type MessageChunk } from './context.js';
import type { ErrorValue } from './error-value.js';
import type { JsonObject } from './event.js';
import { isRecord } from '../json.js';

export type DeliveredLine =
  { type: 'message.delta'; run_id: string; data: { chunk: MessageChunk } } | { type: 'message.completed'; run_id: string; data: { message: Message } };
export type ObservedLine = { type: string; run_id: string; data: JsonObject; observed: true; executed?: false };
export type SummaryLine = {
  type: 'run.summary';
  run_id: string;
  runner_id: string;
  binding_id: string;
  event_id: string;
  status: string;
  error: ErrorValue | null;
  retryable: boolean;
};
export type ResultLine = DeliveredLine | ObservedLine | SummaryLine;

export function deliveredLine(
  item: { type: 'message.delta'; run_id: string; chunk: MessageChunk } | { type: 'message.completed'; run_id: string; message: Message },
): DeliveredLine {
  return item.type === 'message.delta'
    ? { type: item.type, run_id: item.run_id, data: { chunk: item.chunk } }
    : { type: item.type, run_id: item.run_id, data: { message: item.message } };
}

/** A notice the host recorded but did not deliver; `executed: false` marks an action it refused to run. */
export function observedLine(run_id: string, notice: { type: string; data: JsonObject; executed?: boolean }): ObservedLine {
  return { type: notice.type, run_id, data: notice.data, observed: true, ...(notice.executed === false ? { executed: false as const } : {}) };
}

export function summaryLine(run: {
  run_id: string;
  runner_id: string;
  binding_id: string;
  event_id: string;
  status: string;
  error: ErrorValue | null;
}): SummaryLine {
  return {
    type: 'run.summary',
    run_id: run.run_id,
    runner_id: run.runner_id,
    binding_id: run.binding_id,
    event_id: run.event_id,
    status: run.status,
    error: run.error,
    retryable: run.error?.retryable ?? false,
  };
}

/**
 * A delivered item read back from a run record: the result line it was stored as, or (records written
 * before results were stored as lines) the item itself, `{type, run_id, chunk|message}`. Null for anything else.
 */
export function storedDeliveredLine(value: unknown): DeliveredLine | null {
  if (!isRecord(value) || typeof value.run_id !== 'string') return null;
  const payload = isRecord(value.data) ? value.data : value;
  if (value.type === 'message.delta') {
    const chunk = MessageChunkSchema.safeParse(payload.chunk);
    return chunk.success ? { type: 'message.delta', run_id: value.run_id, data: { chunk: chunk.data } } : null;
  }
  if (value.type === 'message.completed') {
    const message = MessageSchema.safeParse(payload.message);
    return message.success ? { type: 'message.completed', run_id: value.run_id, data: { message: message.data } } : null;
  }
  return null;
}
