// The one result-stream line (`StreamItem`): `lbot run --json`, `GET /v1/runs/:id/results`, `runs show`'s
// `results[]` and cassettes all carry it (core/protocol/result-line.ts builds it).
import { z } from 'zod';
import { MessageChunkSchema, MessageSchema } from '../protocol/context.js';
import { ErrorValueSchema } from '../protocol/error-value.js';
import { JsonObjectSchema } from '../protocol/event.js';
import { defineShape } from './shape.js';

export const MessageDeltaLineSchema = z.strictObject({
  type: z.literal('message.delta'),
  run_id: z.string(),
  data: z.strictObject({ chunk: MessageChunkSchema }),
});
export const MessageCompletedLineSchema = z.strictObject({
  type: z.literal('message.completed'),
  run_id: z.string(),
  data: z.strictObject({ message: MessageSchema }),
});
/** A notice the host recorded but did not deliver (`tool.call.*`, `state.updated`, …, with --verbose). */
export const ObservedLineSchema = z.strictObject({
  type: z.string().refine((t) => t !== 'message.delta' && t !== 'message.completed' && !t.endsWith('.summary'), 'not an observed notice type'),
  run_id: z.string(),
  data: JsonObjectSchema,
  observed: z.literal(true),
  executed: z.literal(false).optional(),
});
export const RunSummaryLineSchema = z.strictObject({
  type: z.literal('run.summary'),
  run_id: z.string(),
  runner_id: z.string(),
  binding_id: z.string(),
  event_id: z.string(),
  status: z.string(),
  error: ErrorValueSchema.nullable(),
  retryable: z.boolean(),
});
/** The last line of `lbot run --json`: how many events ran and how many were skipped after a failed one. */
export const ReplaySummaryLineSchema = z.strictObject({ type: z.literal('replay.summary'), runs: z.number().int(), skipped: z.number().int() });

export const StreamItemSchema = z.union([
  MessageDeltaLineSchema,
  MessageCompletedLineSchema,
  RunSummaryLineSchema,
  ReplaySummaryLineSchema,
  ObservedLineSchema,
]);

/** A delivered item as it is stored in a run record's `results[]`. */
export const DeliveredLineSchema = z.union([MessageDeltaLineSchema, MessageCompletedLineSchema]);

export const StreamItem = defineShape(
  'StreamItem',
  'stream',
  'one line of a result stream: message.delta, message.completed, an observed notice (observed: true), run.summary, replay.summary',
  StreamItemSchema,
);
