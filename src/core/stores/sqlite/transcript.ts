// The conversation transcript on SQLite (runner-protocol.md §8.2): seq = row id, cursor paging, trigram search.
import type { TranscriptItem } from '../../protocol/proxy.js';
import type { Transcript, TranscriptAppend, TranscriptPage, TranscriptPageQuery, TranscriptSearchQuery } from '../types.js';
import { jsonObject, jsonObjectList, jsonObjectOrNull, jsonText, num, numOrNull, rowOrNull, rowsOf, text, textOrNull, type Row } from './columns.js';
import type { StoreDb } from './connection.js';
import { clampLimit, TRANSCRIPT_CONTENT_MAX_CHARS, truncateChars } from './text-limits.js';
import { conversationTag, matchExpression, usesIndex } from './transcript-search.js';
import { timeOrderedId } from '../../time-ordered-id.js';

const INSERT = `INSERT INTO transcript (
  transcript_id, event_id, conversation_id, thread_id, role, item_type, content, content_json,
  artifact_refs_json, run_id, runner_id, created_at, metadata_json
) VALUES (
  @transcript_id, @event_id, @conversation_id, @thread_id, @role, @item_type, @content, @content_json,
  @artifact_refs_json, @run_id, @runner_id, @created_at, @metadata_json
)`;
const INSERT_FTS = 'INSERT INTO transcript_fts (rowid, conv_tag, content) VALUES (?, ?, ?)';
const DELETE_ROW = 'DELETE FROM transcript WHERE id = ?';

export function toItem(row: Row, includeArtifacts: boolean): TranscriptItem {
  const seq = num(row, 'id');
  return {
    transcript_id: text(row, 'transcript_id'),
    event_id: text(row, 'event_id'),
    conversation_id: textOrNull(row, 'conversation_id'),
    thread_id: textOrNull(row, 'thread_id'),
    role: text(row, 'role'),
    item_type: text(row, 'item_type'),
    content: textOrNull(row, 'content'),
    content_json: jsonObjectOrNull(row, 'content_json'),
    artifact_refs: includeArtifacts ? jsonObjectList(row, 'artifact_refs_json') : [],
    seq,
    cursor: String(seq),
    created_at: numOrNull(row, 'created_at'),
    metadata: jsonObject(row, 'metadata_json'),
  };
}

/** SQL for the optional role / item_type IN filters, on table alias `t`. */
function itemFilters(query: TranscriptSearchQuery): { sql: string; params: string[] } {
  const parts: string[] = [];
  const params: string[] = [];
  if (query.roles && query.roles.length > 0) {
    parts.push('t.role IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(query.roles));
  }
  if (query.item_types && query.item_types.length > 0) {
    parts.push('t.item_type IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(query.item_types));
  }
  return { sql: parts.map((p) => ` AND ${p}`).join(''), params };
}

/** Transcript backed by the `transcript` table and its `transcript_fts` index. */
export class SqliteTranscript implements Transcript {
  constructor(readonly store: StoreDb) {}

  /** The item as written (without its seq) and the statement's parameters. */
  #values(item: TranscriptAppend): { written: Omit<TranscriptItem, 'seq' | 'cursor'>; params: Record<string, unknown> } {
    const written = {
      transcript_id: timeOrderedId(),
      event_id: item.event_id,
      conversation_id: item.conversation_id,
      thread_id: item.thread_id,
      role: item.role,
      item_type: item.item_type,
      content: item.content === null ? null : truncateChars(item.content, TRANSCRIPT_CONTENT_MAX_CHARS),
      content_json: item.content_json,
      artifact_refs: item.artifact_refs,
      created_at: this.store.now(),
      metadata: item.metadata,
    };
    const { content_json, artifact_refs, metadata, ...columns } = written;
    return {
      written,
      params: {
        ...columns,
        content_json: content_json === null ? null : jsonText(content_json),
        artifact_refs_json: jsonText(artifact_refs),
        run_id: item.run_id,
        runner_id: item.runner_id,
        metadata_json: jsonText(metadata),
      },
    };
  }

  #index(id: number | bigint, conversation_id: string, content: string | null): void {
    if (content !== null) this.store.prepare(INSERT_FTS).run(id, conversationTag(conversation_id), content);
  }

  /** The item is built from what was written, not read back: hosts append on every run and ignore it. */
  append(item: TranscriptAppend): TranscriptItem {
    const { written, params } = this.#values(item);
    const insert = (): number => {
      const id = Number(this.store.prepare(INSERT).run(params).lastInsertRowid);
      try {
        this.#index(id, item.conversation_id, written.content);
      } catch (err) {
        // Without a transaction of its own (below) the row must not outlive its failed index entry.
        if (this.store.grouped && this.store.db.inTransaction) this.store.prepare(DELETE_ROW).run(id);
        throw err;
      }
      return id;
    };
    // In a group of writes the two statements share the group's transaction already. A SAVEPOINT around
    // them would copy every page they touch into a statement journal, about 30 µs an append; the row is
    // removed by hand instead when its index entry fails.
    const doing = 'appending to the transcript';
    const seq = this.store.grouped ? this.store.run(doing, insert) : this.store.write(doing, insert);
    return { ...written, seq, cursor: String(seq) };
  }

  /** Appends many items in one transaction (imports, benchmarks); returns how many were written. */
  appendMany(items: Iterable<TranscriptAppend>): number {
    return this.store.write('appending to the transcript', () => {
      let n = 0;
      const insert = this.store.prepare(INSERT);
      for (const item of items) {
        const { written, params } = this.#values(item);
        this.#index(insert.run(params).lastInsertRowid, item.conversation_id, written.content);
        n++;
      }
      return n;
    });
  }

  page(query: TranscriptPageQuery): TranscriptPage {
    const limit = clampLimit(query.limit);
    let sql: string;
    const params: unknown[] = [query.conversation_id];
    if (query.direction === 'backward' && query.before_seq !== null && query.before_seq !== undefined) {
      sql = 'SELECT * FROM transcript WHERE conversation_id = ? AND id < ? ORDER BY id DESC LIMIT ?';
      params.push(query.before_seq);
    } else if (query.direction === 'forward' && query.after_seq !== null && query.after_seq !== undefined) {
      sql = 'SELECT * FROM transcript WHERE conversation_id = ? AND id > ? ORDER BY id ASC LIMIT ?';
      params.push(query.after_seq);
    } else {
      sql = 'SELECT * FROM transcript WHERE conversation_id = ? ORDER BY id DESC LIMIT ?';
    }
    return this.store.run('reading the transcript', () => {
      const rows = rowsOf(this.store.prepare(sql).all(...params, limit + 1));
      const items = rows.slice(0, limit).map((r) => toItem(r, query.include_artifacts));
      const has_more = rows.length > limit;
      return {
        items,
        has_more,
        next_seq: has_more ? (items.at(-1)?.seq ?? null) : null,
        prev_seq: items[0]?.seq ?? null,
      };
    });
  }

  search(query: TranscriptSearchQuery): TranscriptItem[] {
    const top_k = clampLimit(query.top_k);
    const filters = itemFilters(query);
    let sql: string;
    let params: unknown[];
    if (query.query === '') {
      sql = `SELECT t.* FROM transcript t WHERE t.conversation_id = ? AND t.content IS NOT NULL${filters.sql} ORDER BY t.id DESC LIMIT ?`;
      params = [query.conversation_id, ...filters.params, top_k];
    } else if (usesIndex(query.query)) {
      sql = `SELECT t.* FROM transcript_fts CROSS JOIN transcript t ON t.id = transcript_fts.rowid
        WHERE transcript_fts MATCH ? AND t.conversation_id = ? AND lbot_icontains(t.content, ?)${filters.sql}
        ORDER BY transcript_fts.rowid DESC LIMIT ?`;
      params = [matchExpression(query.conversation_id, query.query), query.conversation_id, query.query.toLowerCase(), ...filters.params, top_k];
    } else {
      sql = `SELECT t.* FROM transcript t WHERE t.conversation_id = ? AND lbot_icontains(t.content, ?)${filters.sql} ORDER BY t.id DESC LIMIT ?`;
      params = [query.conversation_id, query.query.toLowerCase(), ...filters.params, top_k];
    }
    return this.store.run('searching the transcript', () => rowsOf(this.store.prepare(sql).all(...params)).map((r) => toItem(r, true)));
  }

  latestSeq(conversation_id: string): number | null {
    return this.store.run('reading the transcript', () => {
      const row = rowOrNull(this.store.prepare('SELECT max(id) AS seq FROM transcript WHERE conversation_id = ?').get(conversation_id));
      return row ? numOrNull(row, 'seq') : null;
    });
  }
}
