// Opens the PostgreSQL stores of one database: a pool, the schema migrated (under the advisory lock), the stores.
import type { AsyncStores } from '../../../core/stores/async.js';
import { PgArtifactStore } from './artifacts.js';
import { PgStoreDb, type PgStoreDbOptions } from './connection.js';
import { PgEventLog } from './event-log.js';
import { migratePostgres, type AppliedMigration } from './migrations.js';
import { PgRunStore } from './runs.js';
import { PgStateStore } from './state.js';
import { PgStorageStore } from './storage.js';
import { PgTranscript } from './transcript.js';
import { PgKnowledgeStore } from './knowledge.js';

export type PostgresStores = AsyncStores & {
  readonly db: PgStoreDb;
  readonly knowledge: PgKnowledgeStore;
  /** The migrations this open applied (empty when the schema was current). */
  readonly migrated: AppliedMigration[];
};

/**
 * Connects to `url`, brings the schema up to date and returns the stores. Throws `store.unavailable`
 * when the server cannot be reached or the database is newer than this lbot.
 */
export async function openPostgresStores(url: string, opts: PgStoreDbOptions = {}): Promise<PostgresStores> {
  const db = new PgStoreDb(url, opts);
  let migrated: AppliedMigration[];
  try {
    migrated = await migratePostgres(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  let closed = false;
  return {
    db,
    migrated,
    events: new PgEventLog(db),
    transcript: new PgTranscript(db),
    runs: new PgRunStore(db),
    state: new PgStateStore(db),
    storage: new PgStorageStore(db),
    artifacts: new PgArtifactStore(db),
    knowledge: new PgKnowledgeStore(db),
    // Every write commits itself on PostgreSQL: nothing is held back.
    commit: () => Promise.resolve(),
    async close() {
      if (closed) return;
      closed = true;
      await db.close();
    },
  };
}
