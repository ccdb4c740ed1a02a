// Opens the stores a host runs on: the six run stores on SQLite (the embedded default, in the data dir) or on
// PostgreSQL (a postgres:// URL), and beside them the data dir's SQLite stores that stay per machine
// (delivery outbox and poll offsets, knowledge bases; docs/postgres.md).
import { asAsyncStores, type AsyncStores } from '../../core/stores/async.js';
import type { DeliveryStore } from '../../core/stores/delivery-types.js';
import type { KnowledgeStore } from '../../core/stores/knowledge-types.js';
import { openSqliteStores } from '../../core/stores/sqlite/open.js';
import { reapInterruptedRuns } from '../run-owner.js';

export type StoreBackend = 'sqlite' | 'postgres';

export type HostStores = AsyncStores & {
  readonly backend: StoreBackend;
  readonly delivery: DeliveryStore;
  readonly knowledge: KnowledgeStore;
};

/**
 * The stores of one host. `databaseUrl` null: everything in the data dir's SQLite file. Runs a crashed
 * process of this machine left `running` are marked interrupted first.
 */
export async function openHostStores(dataDir: string, databaseUrl: string | null): Promise<HostStores> {
  const local = openSqliteStores(dataDir);
  let run: AsyncStores;
  try {
    if (databaseUrl === null) run = asAsyncStores(local);
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
    knowledge: local.knowledge,
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
