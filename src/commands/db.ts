// `lbot db status|migrate`: the run stores' schema (SQLite in the data dir, or PostgreSQL with --store).
import type { Command } from 'commander';
import type { SchemaReport } from '../runtime/stores/schema.js';
import type { GetContext } from './shared/context.js';
import * as shapes from '../core/shapes/index.js';

function line(r: SchemaReport): string {
  const n = r.applied_now.length;
  const now = n > 0 ? `applied ${n} migration${n === 1 ? '' : 's'} (${r.applied_now.map((s) => s.version).join(', ')}); ` : '';
  const state = r.schema_version === r.latest_version ? 'up to date' : `${r.latest_version - r.schema_version} pending: run lbot db migrate`;
  return `${r.backend} ${r.location}: ${now}schema version ${r.schema_version} of ${r.latest_version}, ${state}`;
}

export function registerDb(program: Command, getCtx: GetContext): void {
  const db = program.command('db').description('The run stores’ schema: its version, and migrating it (PostgreSQL with --store, else the data dir’s SQLite)');
  db.command('status')
    .description('print the schema version and the migrations applied, without changing anything')
    .action(async () => {
      const ctx = getCtx();
      const { storeSchema } = await import('../runtime/stores/schema.js');
      ctx.output.item(shapes.DbSchema, await storeSchema(ctx.flags.dataDir, ctx.flags.store, false), line);
    });
  db.command('migrate')
    .description('apply the pending migrations under a lock (lbot serve also does it on start)')
    .action(async () => {
      const ctx = getCtx();
      const { storeSchema } = await import('../runtime/stores/schema.js');
      ctx.output.item(shapes.DbSchema, await storeSchema(ctx.flags.dataDir, ctx.flags.store, true), line);
    });
}
