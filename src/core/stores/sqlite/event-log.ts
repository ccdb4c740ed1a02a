// The event log on SQLite (runner-protocol.md §8.1): one row per run, paged newest first by row id.
import type { EventRecord } from '../../protocol/proxy.js';
import type { ConversationSummary, EventLog, EventLogAppend, EventPageQuery, Page } from '../types.js';
import { jsonObject, jsonObjectOrNull, jsonText, num, numOrNull, rowOrNull, rowsOf, text, textOrNull, type Row } from './columns.js';
import type { StoreDb } from './connection.js';
import { clampLimit, EVENT_SUMMARY_MAX_CHARS, truncateChars } from './text-limits.js';

const INSERT = `INSERT INTO event_log (
  event_id, event_type, event_time, source, bot_id, workspace_id, conversation_id, thread_id,
  actor_type, actor_id, actor_name, subject_type, subject_id, input_summary, input_json, raw_ref,
  run_id, runner_id, created_at, metadata_json
) VALUES (
  @event_id, @event_type, @event_time, @source, @bot_id, @workspace_id, @conversation_id, @thread_id,
  @actor_type, @actor_id, @actor_name, @subject_type, @subject_id, @input_summary, @input_json, @raw_ref,
  @run_id, @runner_id, @created_at, @metadata_json
)`;

export function toEventRecord(row: Row): EventRecord {
  const id = num(row, 'id');
  return {
    id,
    seq: id,
    cursor: String(id),
    event_id: text(row, 'event_id'),
    event_type: text(row, 'event_type'),
    event_time: numOrNull(row, 'event_time'),
    source: text(row, 'source'),
    bot_id: textOrNull(row, 'bot_id'),
    workspace_id: textOrNull(row, 'workspace_id'),
    conversation_id: textOrNull(row, 'conversation_id'),
    thread_id: textOrNull(row, 'thread_id'),
    actor_type: textOrNull(row, 'actor_type'),
    actor_id: textOrNull(row, 'actor_id'),
    actor_name: textOrNull(row, 'actor_name'),
    subject_type: textOrNull(row, 'subject_type'),
    subject_id: textOrNull(row, 'subject_id'),
    input_summary: textOrNull(row, 'input_summary'),
    input_json: jsonObjectOrNull(row, 'input_json'),
    raw_ref: textOrNull(row, 'raw_ref'),
    run_id: textOrNull(row, 'run_id'),
    runner_id: textOrNull(row, 'runner_id'),
    created_at: numOrNull(row, 'created_at'),
    metadata: jsonObject(row, 'metadata_json'),
  };
}

/** EventLog backed by the `event_log` table. */
export class SqliteEventLog implements EventLog {
  constructor(readonly store: StoreDb) {}

  /** The record is built from what was written, not read back: hosts append on every run and ignore it. */
  append(record: EventLogAppend): EventRecord {
    const columns = {
      event_id: record.event_id,
      event_type: record.event_type,
      event_time: record.event_time,
      source: record.source,
      bot_id: record.bot_id,
      workspace_id: record.workspace_id,
      conversation_id: record.conversation_id,
      thread_id: record.thread_id,
      actor_type: record.actor_type,
      actor_id: record.actor_id,
      actor_name: record.actor_name,
      subject_type: record.subject_type,
      subject_id: record.subject_id,
      input_summary: record.input_text === null ? null : truncateChars(record.input_text, EVENT_SUMMARY_MAX_CHARS),
      raw_ref: record.raw_ref,
      run_id: record.run_id,
      runner_id: record.runner_id,
      created_at: this.store.now(),
    };
    const id = this.store.run('appending to the event log', () =>
      Number(
        this.store
          .prepare(INSERT)
          .run({ ...columns, input_json: record.input_json === null ? null : jsonText(record.input_json), metadata_json: jsonText(record.metadata) })
          .lastInsertRowid,
      ),
    );
    return { id, seq: id, cursor: String(id), ...columns, input_json: record.input_json, metadata: record.metadata };
  }

  page(query: EventPageQuery): Page<EventRecord> {
    const limit = clampLimit(query.limit);
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.conversation_id === null) where.push('conversation_id IS NULL');
    else if (query.conversation_id !== undefined) {
      where.push('conversation_id = ?');
      params.push(query.conversation_id);
    }
    if (query.event_types && query.event_types.length > 0) {
      where.push('event_type IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(query.event_types));
    }
    if (query.before_seq !== null && query.before_seq !== undefined) {
      where.push('id < ?');
      params.push(query.before_seq);
    }
    const sql = `SELECT * FROM event_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
    return this.store.run('reading the event log', () => {
      const rows = rowsOf(this.store.prepare(sql).all(...params, limit + 1));
      const items = rows.slice(0, limit).map(toEventRecord);
      const has_more = rows.length > limit;
      return { items, has_more, next_seq: has_more ? (items.at(-1)?.seq ?? null) : null };
    });
  }

  findByEventId(event_id: string): EventRecord[] {
    return this.store.run('reading the event log', () =>
      rowsOf(this.store.prepare('SELECT * FROM event_log WHERE event_id = ? ORDER BY id DESC').all(event_id)).map(toEventRecord),
    );
  }

  conversations(limit: number): ConversationSummary[] {
    const sql = `SELECT g.conversation_id, g.events, g.first_at, g.last_seq, l.created_at AS last_at, l.event_type, l.actor_id, l.actor_name,
        l.input_summary, l.run_id
      FROM (SELECT conversation_id, count(*) AS events, min(created_at) AS first_at, max(id) AS last_seq
            FROM event_log WHERE conversation_id IS NOT NULL GROUP BY conversation_id) g
      JOIN event_log l ON l.id = g.last_seq
      ORDER BY g.last_seq DESC LIMIT ?`;
    return this.store.run('reading the event log', () =>
      rowsOf(this.store.prepare(sql).all(clampLimit(limit))).map((row) => ({
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

  latestSeq(conversation_id: string): number | null {
    return this.store.run('reading the event log', () => {
      const row = rowOrNull(this.store.prepare('SELECT max(id) AS seq FROM event_log WHERE conversation_id = ?').get(conversation_id));
      return row ? numOrNull(row, 'seq') : null;
    });
  }
}
