// Telegram getUpdates: the request for one long poll and how its answer reads (offset, rate limits).
import { z } from 'zod';

/** Seconds Telegram holds a getUpdates request open when it has nothing to give. */
export const LONG_POLL_TIMEOUT_S = 30;
export const UPDATES_PER_POLL = 100;

export function getUpdatesBody(offset: number | null): string {
  return JSON.stringify({ ...(offset === null ? {} : { offset }), timeout: LONG_POLL_TIMEOUT_S, limit: UPDATES_PER_POLL });
}

const UpdatesAnswerSchema = z.looseObject({
  ok: z.boolean(),
  result: z.array(z.unknown()).optional(),
  error_code: z.number().optional(),
  description: z.string().optional(),
  parameters: z.looseObject({ retry_after: z.number().optional() }).optional(),
});
const UpdateIdSchema = z.looseObject({ update_id: z.number().int().nonnegative() });

export type UpdatesAnswer =
  | { kind: 'updates'; updates: Array<{ update_id: number; update: unknown }> }
  | { kind: 'error'; code: number; description: string; retry_after_s: number | null };

/** The updates of an answer in update_id order; an entry without an update_id is dropped (it cannot be confirmed). */
export function readUpdates(status: number, json: unknown): UpdatesAnswer {
  const a = UpdatesAnswerSchema.safeParse(json);
  if (!a.success || !a.data.ok || !a.data.result) {
    return {
      kind: 'error',
      code: a.success ? (a.data.error_code ?? status) : status,
      description: a.success ? (a.data.description ?? '') : 'not a Bot API answer',
      retry_after_s: a.success ? (a.data.parameters?.retry_after ?? null) : null,
    };
  }
  const updates = a.data.result.flatMap((u) => {
    const id = UpdateIdSchema.safeParse(u);
    return id.success ? [{ update_id: id.data.update_id, update: u }] : [];
  });
  return { kind: 'updates', updates: updates.sort((x, y) => x.update_id - y.update_id) };
}
