// The conversation transcript on PostgreSQL (runner-protocol.md §8.2): seq = row id, cursor paging,
// literal case-insensitive substring search backed by a pg_trgm GIN index.
import { LbotError } from '../../../core/errors.js';
import type { TranscriptItem } from '../../../core/protocol/proxy.js';
import type { AsyncTranscript } from '../../../core/stores/async.js';
import { jsonText, numOrNull } from '../../../core/stores/sqlite/columns.js';
import { clampLimit, TRANSCRIPT_CONTENT_MAX_CHARS, truncateChars } from '../../../core/stores/sqlite/text-limits.js';
import { toItem } from '../../../core/stores/sqlite/transcript.js';
import { timeOrderedId } from '../../../core/time-ordered-id.js';
import type { TranscriptAppend, TranscriptPage, TranscriptPageQuery, TranscriptSearchQuery } from '../../../core/stores/types.js';
import type { PgStoreDb } from './connection.js';

const INSERT = `INSERT INTO transcript (
  transcript_id, event_id, conversation_id, thread_id, role, item_type, content, content_json,
  artifact_refs_json, run_id, runner_id, created_at, metadata_json
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING *`;

/** An ILIKE pattern matching `query` as a literal substring: `%`, `_` and `\` match themselves. */
export function containsPattern(query: string): string {
  return `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Transcript backed by the `transcript` table. */
export class PgTranscript implements AsyncTranscript {
  constructor(readonly db: PgStoreDb) {}

  append(item: TranscriptAppend): Promise<TranscriptItem> {
    const content = item.content === null ? null : truncateChars(item.content, TRANSCRIPT_CONTENT_MAX_CHARS);
    return this.db.run('appending to the transcript', async (q) => {
      const row = await q.row(INSERT, [
        timeOrderedId(),
        item.event_id,
        item.conversation_id,
        item.thread_id,
        item.role,
        item.item_type,
        content,
        item.content_json === null ? null : jsonText(item.content_json),
        jsonText(item.artifact_refs),
        item.run_id,
        item.runner_id,
        this.db.now(),
        jsonText(item.metadata),
      ]);
      if (!row) throw new LbotError('internal', 'INSERT into transcript returned no row');
      return toItem(row, true);
    });
  }

  page(query: TranscriptPageQuery): Promise<TranscriptPage> {
    const limit = clampLimit(query.limit);
    let sql: string;
    const params: unknown[] = [query.conversation_id];
    if (query.direction === 'backward' && query.before_seq !== null && query.before_seq !== undefined) {
      sql = 'SELECT * FROM transcript WHERE conversation_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3';
      params.push(query.before_seq);
    } else if (query.direction === 'forward' && query.after_seq !== null && query.after_seq !== undefined) {
      sql = 'SELECT * FROM transcript WHERE conversation_id = $1 AND id > $2 ORDER BY id ASC LIMIT $3';
      params.push(query.after_seq);
    } else {
      sql = 'SELECT * FROM transcript WHERE conversation_id = $1 ORDER BY id DESC LIMIT $2';
    }
    params.push(limit + 1);
    return this.db.run('reading the transcript', async (q) => {
      const rows = await q.rows(sql, params);
      const items = rows.slice(0, limit).map((r) => toItem(r, query.include_artifacts));
      const has_more = rows.length > limit;
      return { items, has_more, next_seq: has_more ? (items.at(-1)?.seq ?? null) : null, prev_seq: items[0]?.seq ?? null };
    });
  }

  search(query: TranscriptSearchQuery): Promise<TranscriptItem[]> {
    const params: unknown[] = [query.conversation_id];
    const where = ['conversation_id = $1', 'content IS NOT NULL'];
    if (query.query !== '') {
      params.push(containsPattern(query.query));
      where.push(`content ILIKE $${params.length} ESCAPE '\\'`);
    }
    if (query.roles && query.roles.length > 0) {
      params.push([...query.roles]);
      where.push(`role = ANY($${params.length}::text[])`);
    }
    if (query.item_types && query.item_types.length > 0) {
      params.push([...query.item_types]);
      where.push(`item_type = ANY($${params.length}::text[])`);
    }
    params.push(clampLimit(query.top_k));
    const sql = `SELECT * FROM transcript WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`;
    return this.db.run('searching the transcript', async (q) => (await q.rows(sql, params)).map((r) => toItem(r, true)));
  }

  latestSeq(conversation_id: string): Promise<number | null> {
    return this.db.run('reading the transcript', async (q) => {
      const row = await q.row('SELECT max(id) AS seq FROM transcript WHERE conversation_id = $1', [conversation_id]);
      return row ? numOrNull(row, 'seq') : null;
    });
  }
}
