// The outbox of platform replies, long-polling offsets and schedule ticks on SQLite (docs/delivery.md).
import { z } from 'zod';
import { JsonObjectSchema } from '../../protocol/event.js';
import { tryParseJson } from '../../json.js';
import type { DeliveryStore, OutboxDraft, OutboxError, OutboxRecord, OutboxStatus } from '../delivery-types.js';
import { num, numOrNull, rowOrNull, rowsOf, text, textOrNull, type Row } from './columns.js';
import type { StoreDb } from './connection.js';

const OutboxErrorSchema = z.object({ code: z.string(), message: z.string(), status: z.number().nullable(), retry_after_s: z.number().nullable() });
const StatusSchema = z.enum(['pending', 'sending', 'delivered', 'failed']);
const OpSchema = z.enum(['send', 'edit']);

const SELECT = `SELECT o.*, e.platform_message_id AS edits_message_id FROM outbox o LEFT JOIN outbox e ON e.idempotency_key = o.edits_key`;

function toRecord(row: Row): OutboxRecord {
  const target = JsonObjectSchema.safeParse(tryParseJson(text(row, 'target_json')));
  const errorRaw = textOrNull(row, 'error_json');
  const error = errorRaw === null ? null : OutboxErrorSchema.safeParse(tryParseJson(errorRaw));
  const pid = numOrNull(row, 'owner_pid');
  const host = textOrNull(row, 'owner_host');
  return {
    id: num(row, 'id'),
    idempotency_key: text(row, 'idempotency_key'),
    account: text(row, 'account'),
    platform: text(row, 'platform'),
    op: OpSchema.catch('send').parse(text(row, 'op')),
    run_id: textOrNull(row, 'run_id'),
    event_id: textOrNull(row, 'event_id'),
    conversation_id: textOrNull(row, 'conversation_id'),
    target: target.success ? target.data : {},
    text: text(row, 'text'),
    edits_key: textOrNull(row, 'edits_key'),
    status: StatusSchema.catch('failed').parse(text(row, 'status')),
    attempts: num(row, 'attempts'),
    next_attempt_at: num(row, 'next_attempt_at'),
    owner: pid !== null && host !== null ? { pid, host } : null,
    platform_message_id: textOrNull(row, 'platform_message_id'),
    edits_message_id: textOrNull(row, 'edits_message_id'),
    error: error === null ? null : error.success ? error.data : { code: 'unknown', message: errorRaw ?? '', status: null, retry_after_s: null },
    created_at: num(row, 'created_at'),
    updated_at: num(row, 'updated_at'),
  };
}

export class SqliteDeliveryStore implements DeliveryStore {
  constructor(private readonly s: StoreDb) {}

  record(drafts: readonly OutboxDraft[], nowS: number): OutboxRecord[] {
    return this.s.write('recording outbox messages', () => {
      const insert = this.s.prepare(
        `INSERT INTO outbox (idempotency_key, account, platform, op, run_id, event_id, conversation_id, target_json, text, edits_key, status, next_attempt_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING`,
      );
      const byKey = this.s.prepare(`${SELECT} WHERE o.idempotency_key = ?`);
      return drafts.map((d) => {
        insert.run(
          d.idempotency_key,
          d.account,
          d.platform,
          d.op,
          d.run_id,
          d.event_id,
          d.conversation_id,
          JSON.stringify(d.target),
          d.text,
          d.edits_key,
          nowS,
          nowS,
          nowS,
        );
        const row = rowOrNull(byKey.get(d.idempotency_key));
        if (!row) throw new Error(`outbox row ${d.idempotency_key} vanished`);
        return toRecord(row);
      });
    });
  }

  claimDue(owner: { pid: number; host: string }, nowS: number, limit: number): OutboxRecord[] {
    const claimed = this.s.write('claiming outbox messages', () => {
      // An edit is due only once the send it edits is delivered; a failed send fails its edits with it.
      const rows = rowsOf(
        this.s
          .prepare(
            `${SELECT} WHERE o.status = 'pending' AND o.next_attempt_at <= ? AND (o.edits_key IS NULL OR e.status IN ('delivered','failed')) ORDER BY o.next_attempt_at, o.id LIMIT ?`,
          )
          .all(nowS, limit),
      );
      const claim = this.s.prepare(
        `UPDATE outbox SET status = 'sending', owner_pid = ?, owner_host = ?, attempts = attempts + 1, updated_at = ? WHERE id = ? AND status = 'pending'`,
      );
      return rows
        .filter((r) => claim.run(owner.pid, owner.host, nowS, num(r, 'id')).changes === 1)
        .map((r) => ({ ...toRecord(r), status: 'sending' as const, owner, attempts: num(r, 'attempts') + 1 }));
    });
    // A claimed message is sent next: the run that wrote it must not be lost after the platform has it.
    if (claimed.length > 0) this.s.commit();
    return claimed;
  }

  markDelivered(id: number, platformMessageId: string | null, nowS: number): void {
    this.s.write('marking an outbox message delivered', () =>
      this.s
        .prepare(
          `UPDATE outbox SET status = 'delivered', platform_message_id = ?, error_json = NULL, owner_pid = NULL, owner_host = NULL, updated_at = ? WHERE id = ?`,
        )
        .run(platformMessageId, nowS, id),
    );
  }

  markRetry(id: number, error: OutboxError, nextAtS: number, nowS: number): void {
    this.s.write('scheduling an outbox retry', () =>
      this.s
        .prepare(`UPDATE outbox SET status = 'pending', error_json = ?, next_attempt_at = ?, owner_pid = NULL, owner_host = NULL, updated_at = ? WHERE id = ?`)
        .run(JSON.stringify(error), nextAtS, nowS, id),
    );
  }

  markFailed(id: number, error: OutboxError, nowS: number): void {
    this.s.write('marking an outbox message failed', () =>
      this.s
        .prepare(`UPDATE outbox SET status = 'failed', error_json = ?, owner_pid = NULL, owner_host = NULL, updated_at = ? WHERE id = ?`)
        .run(JSON.stringify(error), nowS, id),
    );
  }

  releaseAbandoned(isGone: (owner: { pid: number; host: string }) => boolean, nowS: number): number {
    return this.s.write('resuming abandoned outbox messages', () => {
      const rows = rowsOf(this.s.prepare(`SELECT id, owner_pid, owner_host FROM outbox WHERE status = 'sending'`).all());
      const release = this.s.prepare(
        `UPDATE outbox SET status = 'pending', owner_pid = NULL, owner_host = NULL, updated_at = ? WHERE id = ? AND status = 'sending'`,
      );
      let n = 0;
      for (const r of rows) {
        const pid = numOrNull(r, 'owner_pid');
        const host = textOrNull(r, 'owner_host');
        if (pid === null || host === null || isGone({ pid, host })) n += release.run(nowS, num(r, 'id')).changes;
      }
      return n;
    });
  }

  retry(id: number, nowS: number): boolean {
    return this.s.write(
      'retrying an outbox message',
      () =>
        this.s
          .prepare(`UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ? WHERE id = ? AND status = 'failed'`)
          .run(nowS, nowS, id).changes === 1,
    );
  }

  get(id: number): OutboxRecord | null {
    const row = this.s.run('reading the outbox', () => rowOrNull(this.s.prepare(`${SELECT} WHERE o.id = ?`).get(id)));
    return row ? toRecord(row) : null;
  }

  list(opts: { status?: OutboxStatus; run_id?: string; limit?: number }): OutboxRecord[] {
    const where: string[] = [];
    const args: Array<string | number> = [];
    if (opts.status) {
      where.push('o.status = ?');
      args.push(opts.status);
    }
    if (opts.run_id) {
      where.push('o.run_id = ?');
      args.push(opts.run_id);
    }
    const sql = `${SELECT}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY o.id DESC LIMIT ?`;
    return this.s.run('reading the outbox', () => rowsOf(this.s.prepare(sql).all(...args, opts.limit ?? 50)).map(toRecord));
  }

  nextDueAt(): number | null {
    const row = this.s.run('reading the outbox', () =>
      rowOrNull(this.s.prepare(`SELECT min(next_attempt_at) AS at FROM outbox WHERE status = 'pending'`).get()),
    );
    return row ? numOrNull(row, 'at') : null;
  }

  pollOffset(account: string): number | null {
    const row = this.s.run('reading a poll offset', () => rowOrNull(this.s.prepare('SELECT next_offset FROM poll_offsets WHERE account = ?').get(account)));
    return row ? num(row, 'next_offset') : null;
  }

  setPollOffset(account: string, nextOffset: number, nowS: number): void {
    this.s.write('saving a poll offset', () =>
      this.s
        .prepare(
          'INSERT INTO poll_offsets (account, next_offset, updated_at) VALUES (?, ?, ?) ON CONFLICT (account) DO UPDATE SET next_offset = excluded.next_offset, updated_at = excluded.updated_at',
        )
        .run(account, nextOffset, nowS),
    );
    // The next poll confirms everything before this offset to the platform: its events are durable first.
    this.s.commit();
  }

  claimTick(schedule: string, tickAtS: number, owner: { pid: number; host: string }, nowS: number): boolean {
    return this.s.write(
      'claiming a schedule tick',
      () =>
        this.s
          .prepare('INSERT INTO schedule_ticks (schedule, tick_at, owner_pid, owner_host, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING')
          .run(schedule, tickAtS, owner.pid, owner.host, nowS).changes === 1,
    );
  }

  setTickRuns(schedule: string, tickAtS: number, runIds: readonly string[]): void {
    this.s.write('recording a schedule tick', () =>
      this.s.prepare('UPDATE schedule_ticks SET run_ids_json = ? WHERE schedule = ? AND tick_at = ?').run(JSON.stringify(runIds), schedule, tickAtS),
    );
  }

  lastTick(schedule: string): number | null {
    const row = this.s.run('reading schedule ticks', () =>
      rowOrNull(this.s.prepare('SELECT max(tick_at) AS at FROM schedule_ticks WHERE schedule = ?').get(schedule)),
    );
    return row ? numOrNull(row, 'at') : null;
  }

  ticks(schedule: string, limit: number): Array<{ tick_at: number; run_ids: string[]; created_at: number }> {
    const rows = this.s.run('reading schedule ticks', () =>
      rowsOf(
        this.s.prepare('SELECT tick_at, run_ids_json, created_at FROM schedule_ticks WHERE schedule = ? ORDER BY tick_at DESC LIMIT ?').all(schedule, limit),
      ),
    );
    return rows.map((r) => {
      const ids = z.array(z.string()).safeParse(tryParseJson(text(r, 'run_ids_json')));
      return { tick_at: num(r, 'tick_at'), run_ids: ids.success ? ids.data : [], created_at: num(r, 'created_at') };
    });
  }

  claimHttpKey(bot: string, key: string, eventId: string, nowS: number, ttlS: number): boolean {
    return this.s.write('claiming an http bot idempotency key', () => {
      this.s.prepare('DELETE FROM http_bot_keys WHERE created_at < ?').run(nowS - ttlS);
      return (
        this.s.prepare('INSERT INTO http_bot_keys (bot, key, event_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING').run(bot, key, eventId, nowS)
          .changes === 1
      );
    });
  }

  releaseHttpKey(bot: string, key: string): void {
    this.s.write('releasing an http bot idempotency key', () => this.s.prepare('DELETE FROM http_bot_keys WHERE bot = ? AND key = ?').run(bot, key));
  }

  sessionGeneration(bot: string, sessionId: string): number {
    const row = this.s.run('reading an http bot session', () =>
      rowOrNull(this.s.prepare('SELECT generation FROM http_bot_sessions WHERE bot = ? AND session_id = ?').get(bot, sessionId)),
    );
    return row ? num(row, 'generation') : 0;
  }

  resetSession(bot: string, sessionId: string, nowS: number): number {
    return this.s.write('resetting an http bot session', () => {
      this.s
        .prepare(
          `INSERT INTO http_bot_sessions (bot, session_id, generation, updated_at) VALUES (?, ?, 1, ?)
           ON CONFLICT (bot, session_id) DO UPDATE SET generation = generation + 1, updated_at = excluded.updated_at`,
        )
        .run(bot, sessionId, nowS);
      const row = rowOrNull(this.s.prepare('SELECT generation FROM http_bot_sessions WHERE bot = ? AND session_id = ?').get(bot, sessionId));
      return row ? num(row, 'generation') : 1;
    });
  }
}
