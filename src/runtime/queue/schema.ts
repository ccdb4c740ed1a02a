// The queue's tables: lbot's own (run_queue, queue_workers: PostgreSQL migration 2) and graphile-worker's
// schema, migrated by graphile-worker itself under lbot's migration lock so several processes may start at once.
import pg from 'pg';
import { runMigrations } from 'graphile-worker';
import { toPgStoreError } from '../stores/postgres/connection.js';
import { quietGraphileLogger } from './graphile-logger.js';

/** The graphile-worker task that runs one accepted run (payload: {run_id}). */
export const RUN_TASK = 'lbot_run';

/**
 * The graphile-worker job of an accepted run, in the transaction that records it. Its job_key is the run id
 * (adding it twice is one job); max_attempts is high because lbot's own policy (--max-attempts) decides
 * when a run whose worker died is given up, and a task never fails: a run's failure is its record.
 */
export const ADD_JOB_SQL = `SELECT graphile_worker.add_job($1::text, json_build_object('run_id', $2::text), queue_name => $3::text, job_key => $2::text, max_attempts => 1000)`;

/** Key of the advisory lock taken around graphile-worker's migrations (lbot's own migrations use another). */
const QUEUE_MIGRATION_LOCK = 0x6c62_6f71; // 'lboq'

/** Brings graphile-worker's schema up to date on `pool`. */
export async function migrateQueue(pool: pg.Pool, url: string, warn: (m: string) => void): Promise<void> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw toPgStoreError(err, url, 'connecting to migrate the queue');
  }
  try {
    await client.query('SELECT pg_advisory_lock($1)', [QUEUE_MIGRATION_LOCK]);
    await runMigrations({ pgPool: pool, logger: quietGraphileLogger(warn) });
  } catch (err) {
    throw toPgStoreError(err, url, 'migrating the queue');
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [QUEUE_MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
}

/** A pool for graphile-worker: pg's default type parsing (lbot's store pool reads int8 and json its own way). */
export function graphilePool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 10_000 });
  // A client whose server went away must not crash the process; the next query reports it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}
