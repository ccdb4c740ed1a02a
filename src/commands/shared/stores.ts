// Opens the stores for one command (the data dir's SQLite, or PostgreSQL with --store) and closes them afterwards.
import type { HostStores } from '../../runtime/stores/open.js';
import type { CliContext } from './context.js';

export async function withStores<T>(ctx: CliContext, fn: (stores: HostStores) => T | Promise<T>): Promise<T> {
  const { openHostStores } = await import('../../runtime/stores/open.js');
  const stores = await openHostStores(ctx.flags.dataDir, ctx.flags.store);
  try {
    return await fn(stores);
  } finally {
    await stores.close();
  }
}
