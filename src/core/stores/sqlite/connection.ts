// One better-sqlite3 connection with the error mapping and transaction helpers every store uses.
import type Database from 'better-sqlite3';
import { toStoreError } from './store-errors.js';

/** The shared connection to `<data-dir>/lbot.db`. */
export class StoreDb {
  readonly #statements = new Map<string, Database.Statement>();

  constructor(
    readonly db: Database.Database,
    readonly file: string,
    /** Epoch seconds. */
    readonly now: () => number,
  ) {}

  /** A prepared statement, cached by its SQL text (dynamic filters produce a handful of variants). */
  prepare(sql: string): Database.Statement {
    let stmt = this.#statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }

  /** Runs `fn`, mapping SQLite failures to LbotErrors naming the database file. */
  run<T>(doing: string, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw toStoreError(err, this.file, doing);
    }
  }

  /**
   * Runs `fn` as one BEGIN IMMEDIATE transaction. IMMEDIATE takes the write lock up front, so a
   * concurrent writer waits on the busy timeout instead of failing on a read-to-write upgrade;
   * the commit has happened (durably, in the WAL) when this returns.
   */
  write<T>(doing: string, fn: () => T): T {
    return this.run(doing, () => this.db.transaction(fn).immediate());
  }
}
