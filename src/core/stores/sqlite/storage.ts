// Binary key/value storage on SQLite (runner-protocol.md §7.9): BLOB values keyed by (owner_type, owner, key).
import type { StorageStore } from '../types.js';
import { blob, rowOrNull, rowsOf, text } from './columns.js';
import type { StoreDb } from './connection.js';

const UPSERT = `INSERT INTO binary_storage (owner_type, owner, storage_key, value, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (owner_type, owner, storage_key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`;

/** StorageStore backed by the `binary_storage` table. */
export class SqliteStorageStore implements StorageStore {
  constructor(readonly store: StoreDb) {}

  get(owner_type: string, owner: string, key: string): Buffer | null {
    return this.store.run('reading binary storage', () => {
      const row = rowOrNull(
        this.store.prepare('SELECT value FROM binary_storage WHERE owner_type = ? AND owner = ? AND storage_key = ?').get(owner_type, owner, key),
      );
      return row ? blob(row, 'value') : null;
    });
  }

  set(owner_type: string, owner: string, key: string, value: Buffer): void {
    const now = this.store.now();
    this.store.run('writing binary storage', () => {
      this.store.prepare(UPSERT).run(owner_type, owner, key, value, now, now);
    });
  }

  delete(owner_type: string, owner: string, key: string): boolean {
    return this.store.run(
      'deleting from binary storage',
      () => this.store.prepare('DELETE FROM binary_storage WHERE owner_type = ? AND owner = ? AND storage_key = ?').run(owner_type, owner, key).changes > 0,
    );
  }

  list(owner_type: string, owner: string, prefix: string | null): string[] {
    // instr(k, p) = 1 exactly when k starts with p: a literal prefix, no LIKE wildcards.
    const sql = prefix
      ? 'SELECT storage_key FROM binary_storage WHERE owner_type = ? AND owner = ? AND storage_key >= ? AND instr(storage_key, ?) = 1 ORDER BY storage_key'
      : 'SELECT storage_key FROM binary_storage WHERE owner_type = ? AND owner = ? ORDER BY storage_key';
    const params = prefix ? [owner_type, owner, prefix, prefix] : [owner_type, owner];
    return this.store.run('listing binary storage', () => rowsOf(this.store.prepare(sql).all(...params)).map((r) => text(r, 'storage_key')));
  }
}
