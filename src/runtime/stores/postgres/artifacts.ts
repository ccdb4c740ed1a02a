// Artifact metadata on PostgreSQL (runner-protocol.md §8.3) with the bytes content-addressed in the same
// database (artifact_blobs), so every host sharing it reads them.
import { createHash } from 'node:crypto';
import { LbotError } from '../../../core/errors.js';
import type { ArtifactReadResult } from '../../../core/protocol/proxy.js';
import type { AsyncArtifactStore } from '../../../core/stores/async.js';
import { readLength, toRecord } from '../../../core/stores/sqlite/artifacts.js';
import { blob, jsonText, num } from '../../../core/stores/sqlite/columns.js';
import type { ArtifactRecord, ArtifactRegister, ArtifactStorageType } from '../../../core/stores/types.js';
import { isUniqueViolation, type PgStoreDb } from './connection.js';

/** node-postgres sends bytes as hex text (twice their size) within one JS string: bytes past this are refused. */
export const PG_ARTIFACT_MAX_BYTES = 256 * 1_048_576;

const INSERT = `INSERT INTO agent_artifact (
  artifact_id, artifact_type, mime_type, name, size_bytes, sha256, source, storage_key, storage_type,
  conversation_id, run_id, runner_id, bot_id, workspace_id, created_at, expires_at, metadata_json
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING *`;

function duplicate(artifact_id: string): LbotError {
  return new LbotError('invalid_argument', `artifact ${artifact_id} already exists; artifact ids must be unique`, {
    details: { artifact_id, reason: 'duplicate_artifact_id' },
  });
}

/** ArtifactStore backed by the `agent_artifact` and `artifact_blobs` tables. */
export class PgArtifactStore implements AsyncArtifactStore {
  constructor(readonly db: PgStoreDb) {}

  register(artifact: ArtifactRegister): Promise<ArtifactRecord> {
    let storage_type: ArtifactStorageType;
    let storage_key: string | null;
    let sha256 = artifact.sha256;
    let size_bytes = artifact.size_bytes;
    const content = artifact.content;
    if (content !== undefined) {
      if (content.length > PG_ARTIFACT_MAX_BYTES) {
        throw new LbotError(
          'invalid_argument',
          `artifact ${artifact.artifact_id} is ${content.length} bytes; the PostgreSQL store takes at most ${PG_ARTIFACT_MAX_BYTES}`,
          {
            details: { artifact_id: artifact.artifact_id, reason: 'too_large', max_bytes: PG_ARTIFACT_MAX_BYTES },
          },
        );
      }
      sha256 = createHash('sha256').update(content).digest('hex');
      size_bytes = content.length;
      storage_type = 'binary_storage';
      storage_key = `sha256:${sha256}`;
    } else {
      storage_type = artifact.storage_type ?? 'metadata_only';
      storage_key = artifact.storage_key ?? null;
    }
    const now = this.db.now();
    // Bytes and record in one transaction: never a record without its bytes, nor orphan bytes of a refused record.
    return this.db.write('registering an artifact', async (q) => {
      if (content !== undefined) {
        await q.exec('INSERT INTO artifact_blobs (sha256, bytes, created_at) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING', [sha256, content, now]);
      }
      try {
        const row = await q.row(INSERT, [
          artifact.artifact_id,
          artifact.artifact_type,
          artifact.mime_type,
          artifact.name,
          size_bytes,
          sha256,
          artifact.source,
          storage_key,
          storage_type,
          artifact.conversation_id,
          artifact.run_id,
          artifact.runner_id,
          artifact.bot_id,
          artifact.workspace_id,
          now,
          artifact.expires_at,
          jsonText(artifact.metadata),
        ]);
        if (!row) throw new LbotError('internal', 'INSERT into agent_artifact returned no row');
        return toRecord(row);
      } catch (err) {
        if (isUniqueViolation(err)) throw duplicate(artifact.artifact_id);
        throw err;
      }
    });
  }

  get(artifact_id: string): Promise<ArtifactRecord | null> {
    return this.db.run('reading artifact metadata', async (q) => {
      const row = await q.row('SELECT * FROM agent_artifact WHERE artifact_id = $1', [artifact_id]);
      return row ? toRecord(row) : null;
    });
  }

  async read(record: ArtifactRecord, offset: number, length: number | null): Promise<ArtifactReadResult> {
    const want = readLength(offset, length);
    const base = { artifact_id: record.artifact_id, mime_type: record.mime_type, size_bytes: record.size_bytes, offset };
    if (record.storage_type !== 'binary_storage') {
      return { ...base, length: null, content_base64: null, file_key: record.storage_key, has_more: false };
    }
    const sha256 = record.sha256;
    const row =
      sha256 === null
        ? null
        : await this.db.run('reading artifact bytes', (q) =>
            q.row('SELECT substring(bytes FROM $2::integer + 1 FOR $3::integer) AS part, octet_length(bytes) AS total FROM artifact_blobs WHERE sha256 = $1', [
              sha256,
              offset,
              want,
            ]),
          );
    if (!row) {
      throw new LbotError('not_found', `the bytes of artifact ${record.artifact_id} are missing from the artifact store`, {
        details: { artifact_id: record.artifact_id, reason: 'artifact_not_found' },
      });
    }
    const bytes = blob(row, 'part');
    return {
      ...base,
      length: bytes.length,
      content_base64: bytes.toString('base64'),
      file_key: null,
      has_more: offset + bytes.length < num(row, 'total'),
    };
  }

  list(filter: { run_id?: string; conversation_id?: string; limit?: number }): Promise<ArtifactRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.run_id !== undefined) {
      params.push(filter.run_id);
      where.push(`run_id = $${params.length}`);
    }
    if (filter.conversation_id !== undefined) {
      params.push(filter.conversation_id);
      where.push(`conversation_id = $${params.length}`);
    }
    const cond = where.length ? `WHERE ${where.join(' AND ')}` : '';
    let sql = `SELECT * FROM agent_artifact ${cond} ORDER BY id`;
    if (filter.limit !== undefined) {
      params.push(Math.max(0, Math.trunc(filter.limit)));
      sql = `SELECT * FROM (SELECT * FROM agent_artifact ${cond} ORDER BY id DESC LIMIT $${params.length}) a ORDER BY id`;
    }
    return this.db.run('listing artifacts', async (q) => (await q.rows(sql, params)).map(toRecord));
  }
}
