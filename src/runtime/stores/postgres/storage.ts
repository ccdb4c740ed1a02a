// Binary key/value storage on PostgreSQL (runner-protocol.md §7.9): bytea values keyed by (owner_type, owner, key).
import type { AsyncStorageStore } from '../../../core/stores/async.js';
import { blob, text } from '../../../core/stores/sqlite/columns.js';
import type { PgStoreDb } from './connection.js';

const UPSERT = `INSERT INTO binary_storage (owner_type, owner, storage_key, value, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $5)
  ON CONFLICT (owner_type, owner, storage_key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`;

/** StorageStore backed by the `binary_storage` table. */
export class PgStorageStore implements AsyncStorageStore {
  constructor(readonly db: PgStoreDb) {}

  get(owner_type: string, owner: string, key: string): Promise<Buffer | null> {
    return this.db.run('reading binary storage', async (q) => {
      const row = await q.row('SELECT value FROM binary_storage WHERE owner_type = $1 AND owner = $2 AND storage_key = $3', [owner_type, owner, key]);
      return row ? blob(row, 'value') : null;
    });
  }

  async set(owner_type: string, owner: string, key: string, value: Buffer): Promise<void> {
    await this.db.run('writing binary storage', (q) => q.exec(UPSERT, [owner_type, owner, key, value, this.db.now()]));
  }

  delete(owner_type: string, owner: string, key: string): Promise<boolean> {
    return this.db.run(
      'deleting from binary storage',
      async (q) => (await q.exec('DELETE FROM binary_storage WHERE owner_type = $1 AND owner = $2 AND storage_key = $3', [owner_type, owner, key])) > 0,
    );
  }

  list(owner_type: string, owner: string, prefix: string | null): Promise<string[]> {
    // starts_with is a literal prefix (no LIKE wildcards); `>= p` lets the index seek.
    const sql = prefix
      ? 'SELECT storage_key FROM binary_storage WHERE owner_type = $1 AND owner = $2 AND storage_key >= $3 AND starts_with(storage_key, $3) ORDER BY storage_key'
      : 'SELECT storage_key FROM binary_storage WHERE owner_type = $1 AND owner = $2 ORDER BY storage_key';
    const params = prefix ? [owner_type, owner, prefix] : [owner_type, owner];
    return this.db.run('listing binary storage', async (q) => (await q.rows(sql, params)).map((r) => text(r, 'storage_key')));
  }
}
