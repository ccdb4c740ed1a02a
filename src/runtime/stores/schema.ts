// `lbot db status|migrate`: the run stores' schema version, what is pending, and bringing it up to date.
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION, sqliteSchema } from '../../core/stores/sqlite/migrations.js';
import { DB_FILE_NAME, openSqliteStores } from '../../core/stores/sqlite/open.js';
import { toStoreError } from '../../core/stores/sqlite/store-errors.js';
import type { StoreBackend } from './open.js';

export type SchemaStep = { version: number; name: string };

export type SchemaReport = {
  backend: StoreBackend;
  /** The SQLite file, or the PostgreSQL URL without its password. */
  location: string;
  schema_version: number;
  latest_version: number;
  applied: SchemaStep[];
  /** The steps this call applied (always empty for status). */
  applied_now: SchemaStep[];
};

async function postgres(url: string, migrate: boolean): Promise<SchemaReport> {
  const { PgStoreDb, redactUrl } = await import('./postgres/connection.js');
  const { appliedVersions, migratePostgres, PG_SCHEMA_VERSION } = await import('./postgres/migrations.js');
  const db = new PgStoreDb(url, { max: 1 });
  try {
    const now = migrate ? await migratePostgres(db) : [];
    const applied = await appliedVersions(db);
    return {
      backend: 'postgres',
      location: redactUrl(url),
      schema_version: Math.max(0, ...applied.map((s) => s.version)),
      latest_version: PG_SCHEMA_VERSION,
      applied,
      applied_now: now,
    };
  } finally {
    await db.close();
  }
}

/** Reads lbot.db without writing; a data dir without one is at version 0. */
function sqliteStatus(file: string): { version: number; applied: SchemaStep[] } {
  if (!existsSync(file)) return { version: 0, applied: [] };
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    return sqliteSchema(db);
  } catch (err) {
    throw toStoreError(err, file, 'reading the schema version');
  } finally {
    db?.close();
  }
}

function sqlite(dataDir: string, migrate: boolean): SchemaReport {
  const file = path.join(path.resolve(dataDir), DB_FILE_NAME);
  const before = sqliteStatus(file);
  // Opening the SQLite stores is what migrates them (every command does it on first use).
  if (migrate) openSqliteStores(dataDir).close();
  const after = migrate ? sqliteStatus(file) : before;
  const had = new Set(before.applied.map((s) => s.version));
  return {
    backend: 'sqlite',
    location: file,
    schema_version: after.version,
    latest_version: SCHEMA_VERSION,
    applied: after.applied,
    applied_now: after.applied.filter((s) => !had.has(s.version)),
  };
}

/** The schema of the run stores (`databaseUrl` null: the data dir's SQLite file); `migrate` brings it up to date first. */
export async function storeSchema(dataDir: string, databaseUrl: string | null, migrate: boolean): Promise<SchemaReport> {
  return databaseUrl === null ? sqlite(dataDir, migrate) : postgres(databaseUrl, migrate);
}
