// Artifact metadata on SQLite (runner-protocol.md §8.3) with bytes in content-addressed blob files.
import { z } from 'zod';
import { LbotError } from '../../errors.js';
import type { ArtifactReadResult } from '../../protocol/proxy.js';
import type { ArtifactRecord, ArtifactRegister, ArtifactStorageType, ArtifactStore } from '../types.js';
import { jsonObject, jsonText, numOrNull, rowOrNull, rowsOf, text, textOrNull, type Row } from './columns.js';
import type { BlobFiles } from './blob-files.js';
import type { StoreDb } from './connection.js';
import { isUniqueViolation } from './store-errors.js';

export const ARTIFACT_READ_DEFAULT_BYTES = 1_048_576;
export const ARTIFACT_READ_MAX_BYTES = 10_485_760;

const StorageTypeSchema = z.enum(['binary_storage', 'url', 'platform_ref', 'metadata_only']);

const INSERT = `INSERT INTO agent_artifact (
  artifact_id, artifact_type, mime_type, name, size_bytes, sha256, source, storage_key, storage_type,
  conversation_id, run_id, runner_id, bot_id, workspace_id, created_at, expires_at, metadata_json
) VALUES (
  @artifact_id, @artifact_type, @mime_type, @name, @size_bytes, @sha256, @source, @storage_key, @storage_type,
  @conversation_id, @run_id, @runner_id, @bot_id, @workspace_id, @created_at, @expires_at, @metadata_json
) RETURNING *`;

export function toRecord(row: Row): ArtifactRecord {
  const storage = StorageTypeSchema.safeParse(text(row, 'storage_type'));
  return {
    artifact_id: text(row, 'artifact_id'),
    artifact_type: text(row, 'artifact_type'),
    mime_type: textOrNull(row, 'mime_type'),
    name: textOrNull(row, 'name'),
    size_bytes: numOrNull(row, 'size_bytes'),
    sha256: textOrNull(row, 'sha256'),
    source: text(row, 'source'),
    conversation_id: textOrNull(row, 'conversation_id'),
    run_id: textOrNull(row, 'run_id'),
    runner_id: textOrNull(row, 'runner_id'),
    created_at: numOrNull(row, 'created_at'),
    expires_at: numOrNull(row, 'expires_at'),
    metadata: jsonObject(row, 'metadata_json'),
    storage_type: storage.success ? storage.data : 'metadata_only',
    storage_key: textOrNull(row, 'storage_key'),
    bot_id: textOrNull(row, 'bot_id'),
    workspace_id: textOrNull(row, 'workspace_id'),
  };
}

function badRange(message: string, details: Record<string, unknown>): LbotError {
  return new LbotError('invalid_argument', message, { details: { ...details, reason: 'bad_range' } });
}

/** How many bytes a range read of (offset, length) asks for; a bad range is invalid_argument (reason bad_range). */
export function readLength(offset: number, length: number | null): number {
  if (!Number.isInteger(offset) || offset < 0) throw badRange(`offset must be an integer >= 0, got ${offset}`, { offset });
  if (length !== null && (!Number.isInteger(length) || length <= 0)) throw badRange(`length must be an integer > 0, got ${length}`, { length });
  return Math.min(length ?? ARTIFACT_READ_DEFAULT_BYTES, ARTIFACT_READ_MAX_BYTES);
}

/** ArtifactStore backed by the `agent_artifact` table and BlobFiles. */
export class SqliteArtifactStore implements ArtifactStore {
  constructor(
    readonly store: StoreDb,
    readonly blobs: BlobFiles,
  ) {}

  register(artifact: ArtifactRegister): ArtifactRecord {
    let storage_type: ArtifactStorageType;
    let storage_key: string | null;
    let sha256 = artifact.sha256;
    let size_bytes = artifact.size_bytes;
    if (artifact.content !== undefined) {
      if (this.get(artifact.artifact_id)) throw this.#duplicate(artifact.artifact_id);
      // Bytes first: a crash after this leaves an unreferenced blob, never a record without bytes.
      sha256 = this.blobs.put(artifact.content);
      size_bytes = artifact.content.length;
      storage_type = 'binary_storage';
      storage_key = `sha256:${sha256}`;
    } else {
      storage_type = artifact.storage_type ?? 'metadata_only';
      storage_key = artifact.storage_key ?? null;
    }
    return this.store.run('registering an artifact', () => {
      try {
        const row = rowOrNull(
          this.store.prepare(INSERT).get({
            artifact_id: artifact.artifact_id,
            artifact_type: artifact.artifact_type,
            mime_type: artifact.mime_type,
            name: artifact.name,
            size_bytes,
            sha256,
            source: artifact.source,
            storage_key,
            storage_type,
            conversation_id: artifact.conversation_id,
            run_id: artifact.run_id,
            runner_id: artifact.runner_id,
            bot_id: artifact.bot_id,
            workspace_id: artifact.workspace_id,
            created_at: this.store.now(),
            expires_at: artifact.expires_at,
            metadata_json: jsonText(artifact.metadata),
          }),
        );
        if (!row) throw new LbotError('internal', 'INSERT into agent_artifact returned no row');
        return toRecord(row);
      } catch (err) {
        if (isUniqueViolation(err)) throw this.#duplicate(artifact.artifact_id);
        throw err;
      }
    });
  }

  #duplicate(artifact_id: string): LbotError {
    return new LbotError('invalid_argument', `artifact ${artifact_id} already exists; artifact ids must be unique`, {
      details: { artifact_id, reason: 'duplicate_artifact_id' },
    });
  }

  get(artifact_id: string): ArtifactRecord | null {
    return this.store.run('reading artifact metadata', () => {
      const row = rowOrNull(this.store.prepare('SELECT * FROM agent_artifact WHERE artifact_id = ?').get(artifact_id));
      return row ? toRecord(row) : null;
    });
  }

  read(record: ArtifactRecord, offset: number, length: number | null): ArtifactReadResult {
    const want = readLength(offset, length);
    const base = { artifact_id: record.artifact_id, mime_type: record.mime_type, size_bytes: record.size_bytes, offset };
    if (record.storage_type !== 'binary_storage') {
      return { ...base, length: null, content_base64: null, file_key: record.storage_key, has_more: false };
    }
    const range = record.sha256 === null ? null : this.blobs.read(record.sha256, offset, want);
    if (!range) {
      throw new LbotError('not_found', `the bytes of artifact ${record.artifact_id} are missing from the artifact store`, {
        details: { artifact_id: record.artifact_id, reason: 'artifact_not_found' },
      });
    }
    return {
      ...base,
      length: range.bytes.length,
      content_base64: range.bytes.toString('base64'),
      file_key: null,
      has_more: offset + range.bytes.length < range.total,
    };
  }

  list(filter: { run_id?: string; conversation_id?: string; limit?: number }): ArtifactRecord[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.run_id !== undefined) {
      where.push('run_id = ?');
      params.push(filter.run_id);
    }
    if (filter.conversation_id !== undefined) {
      where.push('conversation_id = ?');
      params.push(filter.conversation_id);
    }
    const cond = where.length ? `WHERE ${where.join(' AND ')}` : '';
    let sql = `SELECT * FROM agent_artifact ${cond} ORDER BY id`;
    if (filter.limit !== undefined) {
      sql = `SELECT * FROM (SELECT * FROM agent_artifact ${cond} ORDER BY id DESC LIMIT ?) ORDER BY id`;
      params.push(Math.max(0, Math.trunc(filter.limit)));
    }
    return this.store.run('listing artifacts', () => rowsOf(this.store.prepare(sql).all(...params)).map(toRecord));
  }
}
