// The outbox as `lbot outbox list` and GET /v1/outbox show it: the query both take and one summary line per row.
import { z } from 'zod';
import type { OutboxRecord } from '../stores/delivery-types.js';

export const OutboxQuerySchema = z.object({
  status: z.enum(['pending', 'sending', 'delivered', 'failed']).optional(),
  run: z.string().min(1).optional(),
  limit: z.coerce.number().int().positive().max(1000).optional(),
});
export type OutboxQuery = z.infer<typeof OutboxQuerySchema>;

export const outboxListOptions = (q: OutboxQuery) => ({ ...(q.status ? { status: q.status } : {}), ...(q.run ? { run_id: q.run } : {}), limit: q.limit ?? 50 });

/** Keys of a reply target that are credentials (a Discord interaction token), masked wherever rows are shown. */
const SECRET_TARGET_KEYS = ['interaction_token'] as const;

/** A row as `lbot outbox list` and GET /v1/outbox show it: credentials in the target masked. */
export function publicOutboxRow(r: OutboxRecord): OutboxRecord {
  if (!SECRET_TARGET_KEYS.some((k) => k in r.target)) return r;
  const target = { ...r.target };
  for (const k of SECRET_TARGET_KEYS) if (k in target) target[k] = '****';
  return { ...r, target };
}

export function outboxLine(r: OutboxRecord): string {
  const when = new Date(r.status === 'pending' ? r.next_attempt_at * 1000 : r.updated_at * 1000).toISOString();
  const err = r.error ? `  ${r.error.code}: ${r.error.message}` : '';
  const preview = r.text.length > 40 ? `${r.text.slice(0, 40)}…` : r.text;
  return `${r.id}  ${r.status}  ${r.platform}/${r.account} ${r.op}  attempts ${r.attempts}  ${r.status === 'pending' ? 'next' : 'at'} ${when}  ${JSON.stringify(preview)}${err}`;
}
