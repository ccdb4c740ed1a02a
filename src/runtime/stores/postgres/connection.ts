// One pg pool with the error mapping and transaction helper every PostgreSQL store uses.
import pg from 'pg';
import { LbotError } from '../../../core/errors.js';
import { isRecord } from '../../../core/json.js';
import type { Row } from '../../../core/stores/sqlite/columns.js';

const URL_HINT = 'check --store / LBOT_DATABASE_URL and that the PostgreSQL server is running';

/** The URL without its password, for messages and details. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparseable url)';
  }
}

// Rows keep the SQLite stores' column types: int8 (ids, counts) as numbers, json as its text.
const INT8_OID = 20;
const JSON_OIDS = new Set([114, 3802]);
const builtinParser: (oid: number, format?: 'text' | 'binary') => (value: string) => unknown = pg.types.getTypeParser;
const TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    if (oid === INT8_OID) return (v: string) => Number(v);
    if (JSON_OIDS.has(oid)) return (v: string) => v;
    return builtinParser(oid, format);
  },
};

type Queryable = Pick<pg.PoolClient, 'query'>;

function pgCode(err: unknown): string | null {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : null;
}

/** True for a UNIQUE / PRIMARY KEY violation. */
export function isUniqueViolation(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.code === '23505';
}

/** True for a FOREIGN KEY violation. */
export function isForeignKeyViolation(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.code === '23503';
}

/**
 * Maps a failure inside a store call: serialization failures, deadlocks and lock timeouts become the
 * retryable `store.locked`; a server that cannot be reached, refuses the login or lacks the database
 * becomes `store.unavailable`; text PostgreSQL cannot hold (a NUL character) is `invalid_argument`.
 * LbotErrors and anything else pass through.
 */
export function toPgStoreError(err: unknown, url: string, doing: string): unknown {
  if (err instanceof LbotError) return err;
  const code = pgCode(err);
  if (code === null) return err;
  const message = err instanceof Error ? err.message : String(err);
  const where = redactUrl(url);
  if (code === '40001' || code === '40P01' || code === '55P03') {
    return new LbotError('store.locked', `${where}: ${message} while ${doing}; retry`, { retryable: true, details: { url: where, pg_code: code }, cause: err });
  }
  if (code === '22021' || code === '22P05') {
    return new LbotError('invalid_argument', `${doing}: the text holds a character PostgreSQL cannot store (${message})`, {
      details: { reason: 'unstorable_text', pg_code: code },
      cause: err,
    });
  }
  if (/^(08|28|3D|53|57P|58)/.test(code) || /^E[A-Z]+$/.test(code)) {
    return new LbotError('store.unavailable', `${where}: ${message} (${code}) while ${doing}`, {
      retryable: code.startsWith('08') || code.startsWith('57P') || code.startsWith('E'),
      details: { url: where, pg_code: code },
      hint: URL_HINT,
      cause: err,
    });
  }
  return err;
}

/** The rows of a result as records (the column readers of core/stores/sqlite/columns.ts check each value). */
function rowsOf(result: pg.QueryResult): Row[] {
  return result.rows.map((r: unknown) => {
    if (!isRecord(r)) throw new LbotError('internal', 'PostgreSQL returned a row that is not an object');
    return r;
  });
}

/** A client inside a transaction, or the pool itself. */
export class PgQuery {
  constructor(readonly q: Queryable) {}

  async rows(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return rowsOf(await this.q.query(sql, [...params]));
  }

  async row(sql: string, params: readonly unknown[] = []): Promise<Row | null> {
    return (await this.rows(sql, params))[0] ?? null;
  }

  /** Runs a statement; returns how many rows it changed. */
  async exec(sql: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.q.query(sql, [...params])).rowCount ?? 0;
  }
}

export type PgStoreDbOptions = {
  /** Epoch milliseconds; defaults to the system clock. */
  clock?: { now(): number };
  /** Pool size (default 10). */
  max?: number;
};

/** The shared pool of one PostgreSQL database. */
export class PgStoreDb {
  readonly pool: pg.Pool;
  readonly url: string;
  readonly #clock: { now(): number };

  constructor(url: string, opts: PgStoreDbOptions = {}) {
    this.url = url;
    this.#clock = opts.clock ?? { now: () => Date.now() };
    this.pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, types: TYPES, connectionTimeoutMillis: 10_000 });
    // An idle client whose server went away must not crash the process; the next query reports it.
    this.pool.on('error', () => {});
  }

  /** Epoch seconds. */
  now(): number {
    return this.#clock.now() / 1000;
  }

  /** Runs `fn` on the pool (one statement per call, autocommit), mapping failures to LbotErrors. */
  async run<T>(doing: string, fn: (q: PgQuery) => Promise<T>): Promise<T> {
    try {
      return await fn(new PgQuery(this.pool));
    } catch (err) {
      throw toPgStoreError(err, this.url, doing);
    }
  }

  /** Runs `fn` in one transaction on one client: committed when it resolves, rolled back when it throws. */
  async write<T>(doing: string, fn: (q: PgQuery) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw toPgStoreError(err, this.url, doing);
    }
    try {
      await client.query('BEGIN');
      const out = await fn(new PgQuery(client));
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw toPgStoreError(err, this.url, doing);
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
