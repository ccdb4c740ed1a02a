// Opens the stores a host runs on: the run stores and knowledge bases on SQLite (the embedded default, in the
// data dir) or on PostgreSQL (a postgres:// URL), and beside them the data dir's SQLite stores that stay per
// machine (delivery outbox and poll offsets; docs/postgres.md).
import { asAsyncKnowledge, asAsyncStores, type AsyncStores } from '../../core/stores/async.js';
import type { DeliveryStore } from '../../core/stores/delivery-types.js';
import type { AsyncKnowledgeStore } from '../../core/stores/knowledge-types.js';
import { openSqliteStores } from '../../core/stores/sqlite/open.js';
import { reapInterruptedRuns } from '../run-owner.js';

export type StoreBackend = 'sqlite' | 'postgres';

export type HostStores = AsyncStores & {
  readonly backend: StoreBackend;
  readonly delivery: DeliveryStore;
  readonly knowledge: AsyncKnowledgeStore;
};

/**
 * The stores of one host. `databaseUrl` null: everything in the data dir's SQLite file. Runs a crashed
 * process of this machine left `running` are marked interrupted first. `commitWindowMs`: group commit of
 * the SQLite writes (serve and run; see StoreDb).
 */
export async function openHostStores(dataDir: string, databaseUrl: string | null, opts: { commitWindowMs?: number } = {}): Promise<HostStores> {
  const local = openSqliteStores(dataDir, opts);
  let run: AsyncStores & { knowledge: AsyncKnowledgeStore };
  try {
    if (databaseUrl === null) run = { ...asAsyncStores(local), knowledge: asAsyncKnowledge(local.knowledge) };
    else {
      const { openPostgresStores } = await import('./postgres/open.js');
      run = await openPostgresStores(databaseUrl);
    }
  } catch (err) {
    local.close();
    throw err;
  }
  const stores: HostStores = {
    backend: databaseUrl === null ? 'sqlite' : 'postgres',
    events: run.events,
    transcript: run.transcript,
    runs: run.runs,
    state: run.state,
    storage: run.storage,
    artifacts: run.artifacts,
    delivery: local.delivery,
    knowledge: run.knowledge,
    commit: async () => {
      local.commit();
      if (databaseUrl !== null) await run.commit();
    },
    close: async () => {
      if (databaseUrl !== null) await run.close();
      local.close();
    },
  };
  try {
    await reapInterruptedRuns(stores.runs);
  } catch (err) {
    await stores.close();
    throw err;
  }
  return stores;
}

/** The knowledge bases alone (`lbot kb`): in the data dir's SQLite file, or on PostgreSQL with `databaseUrl`. */
export async function openKnowledge(dataDir: string, databaseUrl: string | null): Promise<{ knowledge: AsyncKnowledgeStore; close(): Promise<void> }> {
  if (databaseUrl === null) {
    const local = openSqliteStores(dataDir);
    return { knowledge: asAsyncKnowledge(local.knowledge), close: () => Promise.resolve(local.close()) };
  }
  const { openPostgresStores } = await import('./postgres/open.js');
  const pg = await openPostgresStores(databaseUrl);
  return { knowledge: pg.knowledge, close: () => pg.close() };
}
