// The stored parts of a run record as zod schemas: read back by the SQLite run store (an item that no longer
// parses is skipped) and, made strict, the shape `runs show --json` prints (core/shapes/stores.ts).
import { z } from 'zod';
import { JsonObjectSchema } from '../protocol/event.js';

export const RunStatusSchema = z.enum(['running', 'completed', 'failed', 'timed_out', 'cancelled', 'interrupted']);
export const ApiCallAuditSchema = z.object({
  at: z.number(),
  action: z.string(),
  resource: z.string().nullable(),
  decision: z.enum(['allowed', 'denied']),
  code: z.string().nullable(),
  caller_plugin: z.string(),
  as_run_id: z.string(),
});
export const ObservedNoticeSchema = z.object({
  at: z.number(),
  type: z.string(),
  data: JsonObjectSchema,
  executed: z.boolean().optional(),
  note: z.string().optional(),
});
export const StateWriteSchema = z.object({ scope: z.string(), key: z.string() });
