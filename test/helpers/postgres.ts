// A database of its own for each PostgreSQL test file, on the suite's private cluster (test/global-setup-postgres.ts).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** The cluster's URL, or null when the PostgreSQL tests are skipped here (see postgresSkipReason). */
export const postgresUrl: string | null = inject('postgresUrl');
export const postgresSkipReason: string = inject('postgresSkipReason');

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  if (postgresUrl === null) throw new Error(postgresSkipReason);
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database and returns its URL and a function that drops it. */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `lbot_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(postgresUrl ?? '');
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
