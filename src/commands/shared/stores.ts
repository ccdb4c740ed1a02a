// Opens the data dir's stores for one command and closes them afterwards (SQLite is loaded lazily).
import type { Stores } from '../../core/stores/types.js';
import type { CliContext } from './context.js';

export async function withStores<T>(ctx: CliContext, fn: (stores: Stores) => T | Promise<T>): Promise<T> {
  const { openSqliteStores } = await import('../../core/stores/sqlite/open.js');
  const { reapInterruptedRuns } = await import('../../runtime/run-owner.js');
  const { asAsyncStores } = await import('../../core/stores/async.js');
  const stores = openSqliteStores(ctx.flags.dataDir);
  try {
    await reapInterruptedRuns(asAsyncStores(stores).runs);
    return await fn(stores);
  } finally {
    stores.close();
  }
}
