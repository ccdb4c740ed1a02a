// The event log on PostgreSQL (runner-protocol.md §8.1): one row per run, paged newest first by row id.
import { LbotError } from '../../../core/errors.js';
import type { EventRecord } from '../../../core/protocol/proxy.js';
import type { AsyncEventLog } from '../../../core/stores/async.js';
import { jsonText, num, numOrNull, text, textOrNull } from '../../../core/stores/sqlite/columns.js';
import { toEventRecord } from '../../../core/stores/sqlite/event-log.js';
import { clampLimit, EVENT_SUMMARY_MAX_CHARS, truncateChars } from '../../../core/stores/sqlite/text-limits.js';
import type { ConversationSummary, EventLogAppend, EventPageQuery, Page } from '../../../core/stores/types.js';
import type { PgStoreDb } from './connection.js';

const INSERT = `INSERT INTO event_log (
  event_id, event_type, event_time, source, bot_id, workspace_id, conversation_id, thread_id,
  actor_type, actor_id, actor_name, subject_type, subject_id, input_summary, input_json, raw_ref,
  run_id, runner_id, created_at, metadata_json
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) RETURNING *`;

/** EventLog backed by the `event_log` table. */
export class PgEventLog implements AsyncEventLog {
  constructor(readonly db: PgStoreDb) {}

  append(record: EventLogAppend): Promise<EventRecord> {
    return this.db.run('appending to the event log', async (q) => {
      const row = await q.row(INSERT, [
        record.event_id,
        record.event_type,
        record.event_time,
        record.source,
        record.bot_id,
        record.workspace_id,
        record.conversation_id,
        record.thread_id,
        record.actor_type,
        record.actor_id,
        record.actor_name,
        record.subject_type,
        record.subject_id,
        record.input_text === null ? null : truncateChars(record.input_text, EVENT_SUMMARY_MAX_CHARS),
        record.input_json === null ? null : jsonText(record.input_json),
        record.raw_ref,
        record.run_id,
        record.runner_id,
        this.db.now(),
        jsonText(record.metadata),
      ]);
      if (!row) throw new LbotError('internal', 'INSERT into event_log returned no row');
      return toEventRecord(row);
    });
  }

  page(query: EventPageQuery): Promise<Page<EventRecord>> {
    const limit = clampLimit(query.limit);
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.conversation_id === null) where.push('conversation_id IS NULL');
    else if (query.conversation_id !== undefined) {
      params.push(query.conversation_id);
      where.push(`conversation_id = $${params.length}`);
    }
    if (query.event_types && query.event_types.length > 0) {
      params.push([...query.event_types]);
      where.push(`event_type = ANY($${params.length}::text[])`);
    }
    if (query.before_seq !== null && query.before_seq !== undefined) {
      params.push(query.before_seq);
      where.push(`id < $${params.length}`);
    }
    params.push(limit + 1);
    const sql = `SELECT * FROM event_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.length}`;
    return this.db.run('reading the event log', async (q) => {
      const rows = await q.rows(sql, params);
      const items = rows.slice(0, limit).map(toEventRecord);
      const has_more = rows.length > limit;
      return { items, has_more, next_seq: has_more ? (items.at(-1)?.seq ?? null) : null };
    });
  }

  findByEventId(event_id: string): Promise<EventRecord[]> {
    return this.db.run('reading the event log', async (q) =>
      (await q.rows('SELECT * FROM event_log WHERE event_id = $1 ORDER BY id DESC', [event_id])).map(toEventRecord),
    );
  }

  conversations(limit: number): Promise<ConversationSummary[]> {
    const sql = `SELECT g.conversation_id, g.events, g.first_at, g.last_seq, l.created_at AS last_at, l.event_type, l.actor_id, l.actor_name,
        l.input_summary, l.run_id
      FROM (SELECT conversation_id, count(*) AS events, min(created_at) AS first_at, max(id) AS last_seq
            FROM event_log WHERE conversation_id IS NOT NULL GROUP BY conversation_id) g
      JOIN event_log l ON l.id = g.last_seq
      ORDER BY g.last_seq DESC LIMIT $1`;
    return this.db.run('reading the event log', async (q) =>
      (await q.rows(sql, [clampLimit(limit)])).map((row) => ({
        conversation_id: text(row, 'conversation_id'),
        events: num(row, 'events'),
        first_at: num(row, 'first_at'),
        last_at: num(row, 'last_at'),
        last_seq: num(row, 'last_seq'),
        last_event_type: text(row, 'event_type'),
        last_actor_id: textOrNull(row, 'actor_id'),
        last_actor_name: textOrNull(row, 'actor_name'),
        last_input: textOrNull(row, 'input_summary'),
        last_run_id: textOrNull(row, 'run_id'),
      })),
    );
  }

  latestSeq(conversation_id: string): Promise<number | null> {
    return this.db.run('reading the event log', async (q) => {
      const row = await q.row('SELECT max(id) AS seq FROM event_log WHERE conversation_id = $1', [conversation_id]);
      return row ? numOrNull(row, 'seq') : null;
    });
  }
}
