// One better-sqlite3 connection with the error mapping, transaction helpers and group commit every store uses.
import type Database from 'better-sqlite3';
import { LbotError } from '../../errors.js';
import { toStoreError } from './store-errors.js';

/**
 * This process's connections that hold an open group of writes, by database file. A connection opening a group
 * or a `write()` transaction commits the others' groups first: better-sqlite3 waits for a lock synchronously,
 * so the other group's commit timer could not run before the busy timeout (two serve or dev hosts in one
 * process). A single autocommit statement of a connection without a window is not covered: nothing says
 * whether `run()` writes, and a read must not end another connection's group.
 */
const openGroups = new Map<string, Set<StoreDb>>();

/**
 * The shared connection to `<data-dir>/lbot.db`.
 *
 * With a commit window (`lbot serve` and `lbot run`, docs/host.md "Group commit"), the first call opens one
 * transaction that every call joins until the window ends or `commit()` is called: the per-run writes
 * of many runs share one commit instead of paying one each. Whoever acknowledges anything outside
 * the process (an HTTP answer, a platform send, a poll offset) calls `commit()` first, so a crash
 * loses only writes nobody was told of. A failed group commit loses writes already answered to
 * callers in the process, so the store then refuses all work (`store.unavailable`) until reopened.
 */
export class StoreDb {
  readonly #statements = new Map<string, Database.Statement>();
  #window: ReturnType<typeof setTimeout> | null = null;
  #broken: LbotError | null = null;
  /** One transaction wrapper for every write: better-sqlite3 builds four functions per `transaction()`. */
  readonly #transaction: Database.Transaction<(fn: () => void) => void>;

  constructor(
    readonly db: Database.Database,
    readonly file: string,
    /** Epoch seconds. */
    readonly now: () => number,
    /** How long a group of writes may wait for its commit; 0 commits every write at once. */
    readonly commitWindowMs = 0,
  ) {
    this.#transaction = db.transaction((fn: () => void) => fn());
  }

  /** Whether every call joins a group of writes, a transaction open already (a commit window is set). */
  get grouped(): boolean {
    return this.commitWindowMs > 0;
  }

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
    if (this.#broken) throw this.#broken;
    try {
      if (this.grouped && !this.db.inTransaction) this.#open();
      return fn();
    } catch (err) {
      // SQLite rolls a whole transaction back on some failures (a full disk, an I/O error).
      if (this.#window && !this.db.inTransaction) this.#break(err, doing);
      throw toStoreError(err, this.file, doing);
    }
  }

  #open(): void {
    this.#commitOthers();
    this.db.exec('BEGIN IMMEDIATE');
    let group = openGroups.get(this.file);
    if (!group) openGroups.set(this.file, (group = new Set()));
    group.add(this);
    this.#window = setTimeout(() => {
      try {
        this.commit();
      } catch {
        // The store is broken now; the next call reports it.
      }
    }, this.commitWindowMs);
  }

  #commitOthers(): void {
    for (const other of openGroups.get(this.file) ?? []) {
      if (other === this) continue;
      try {
        other.commit();
      } catch {
        // That connection is broken now and says so on its next call.
      }
    }
  }

  #leaveGroup(): void {
    clearTimeout(this.#window ?? undefined);
    this.#window = null;
    const group = openGroups.get(this.file);
    group?.delete(this);
    if (group?.size === 0) openGroups.delete(this.file);
  }

  /** Commits the open group of writes, if any; afterwards everything written so far is durable. */
  commit(): void {
    if (this.#broken) throw this.#broken;
    if (!this.#window) return;
    this.#leaveGroup();
    try {
      this.db.exec('COMMIT');
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw this.#break(err, 'committing a group of writes');
    }
  }

  #break(err: unknown, doing: string): LbotError {
    this.#leaveGroup();
    const mapped = toStoreError(err, this.file, doing);
    this.#broken = new LbotError('store.unavailable', `${this.file}: writes already answered were lost while ${doing}; restart lbot`, {
      details: { path: this.file },
      hint: 'check the disk the data dir is on (space, errors), then restart',
      cause: mapped,
    });
    return this.#broken;
  }

  /**
   * Runs `fn` as one BEGIN IMMEDIATE transaction. IMMEDIATE takes the write lock up front, so a
   * concurrent writer waits on the busy timeout instead of failing on a read-to-write upgrade;
   * the commit has happened (durably, in the WAL) when this returns.
   */
  write<T>(doing: string, fn: () => T): T {
    return this.run(doing, () => {
      // Inside a group (opened by run()) the lock is held already; otherwise BEGIN IMMEDIATE takes it here.
      if (!this.db.inTransaction) this.#commitOthers();
      let out!: T;
      this.#transaction.immediate(() => (out = fn()));
      return out;
    });
  }
}
