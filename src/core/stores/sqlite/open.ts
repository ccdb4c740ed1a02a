// Opens the durable stores of one data dir: `<data-dir>/lbot.db` (SQLite, WAL) plus `<data-dir>/artifacts/`.
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { LbotError } from '../../errors.js';
import { createPrivateFile, ensurePrivateDir, tightenPrivateFile } from '../private-files.js';
import type { Stores } from '../types.js';
import { SqliteArtifactStore } from './artifacts.js';
import { SqliteDeliveryStore } from './delivery.js';
import { BlobFiles } from './blob-files.js';
import { StoreDb } from './connection.js';
import { SqliteEventLog } from './event-log.js';
import { SqliteKnowledgeStore } from './knowledge.js';
import { migrate } from './migrations.js';
import { SqliteRunStore } from './runs.js';
import { SqliteStateStore } from './state.js';
import { SqliteStorageStore } from './storage.js';
import { reasonOf, storeUnavailable, toStoreError } from './store-errors.js';
import { SqliteTranscript } from './transcript.js';
import { icontains } from './transcript-search.js';

export const DB_FILE_NAME = 'lbot.db';
export const ARTIFACTS_DIR_NAME = 'artifacts';

/** How long a write waits for another process's write lock before failing with `store.locked`. */
export const BUSY_TIMEOUT_MS = 10_000;

export type SqliteStoresOptions = {
  /** Epoch milliseconds; defaults to the system clock. */
  clock?: { now(): number };
  /** Group commit window in ms (`lbot serve`, `lbot run`; see StoreDb); 0 or absent commits every write at once. */
  commitWindowMs?: number;
};

export type SqliteStores = Stores & {
  readonly dataDir: string;
  readonly dbFile: string;
  readonly transcript: SqliteTranscript;
  readonly knowledge: SqliteKnowledgeStore;
};

/** Creates and removes a probe file: the only reliable writability test (root ignores mode bits, mounts may be read-only). */
function probeWritable(dir: string, what: string): void {
  const probe = path.join(dir, `.lbot-write-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    closeSync(openSync(probe, 'wx'));
    rmSync(probe, { force: true });
  } catch (err) {
    throw storeUnavailable(dir, `${what} is not writable: ${reasonOf(err)}`, err);
  }
}

/** Creates the data dir when missing and proves it and its artifact directory are writable. */
function prepareDataDir(dataDir: string): void {
  try {
    const st = statSync(dataDir, { throwIfNoEntry: false });
    if (st && !st.isDirectory()) throw storeUnavailable(dataDir, 'the data dir exists but is not a directory');
    // Transcripts and state are private to the user running lbot: 0700, tightened when it is wider.
    ensurePrivateDir(dataDir);
  } catch (err) {
    if (err instanceof LbotError) throw err;
    throw storeUnavailable(dataDir, `cannot create the data dir: ${reasonOf(err)}`, err);
  }
  probeWritable(dataDir, 'the data dir');
  const artifacts = path.join(dataDir, ARTIFACTS_DIR_NAME, 'sha256');
  try {
    mkdirSync(artifacts, { recursive: true });
  } catch (err) {
    throw storeUnavailable(artifacts, `cannot create the artifact directory: ${reasonOf(err)}`, err);
  }
  probeWritable(artifacts, 'the artifact directory');
}

/** The database and its WAL sidecars (SQLite gives those the database file's mode). */
const DB_FILES = (file: string) => [file, `${file}-wal`, `${file}-shm`, `${file}-journal`];

function openDatabase(file: string): Database.Database {
  let db: Database.Database;
  try {
    // Created 0600 before SQLite opens it by name, so its mode does not depend on the umask.
    createPrivateFile(file);
    for (const f of DB_FILES(file)) tightenPrivateFile(f);
    db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  } catch (err) {
    throw storeUnavailable(file, `cannot open the database: ${reasonOf(err)}`, err);
  }
  try {
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal')
      throw storeUnavailable(file, `the filesystem does not support SQLite WAL mode (journal_mode stayed ${String(mode)}); use a local disk for the data dir`);
    // NORMAL in WAL mode: a committed transaction survives the process being killed; only an OS
    // crash or power loss can drop the last commits (the database itself stays consistent).
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    // 4 MB of page cache: the pages runs touch (the right edge of tables and indexes, recent rows) stay in
    // it, the rest is one read from the OS's cache away. serve after 10,000 runs held 147 MB (145–151) with
    // 8 MB and 142 MB (138–145) with 4 MB, at the same throughput (five alternating runs each).
    db.pragma('cache_size = -4000');
    db.pragma('journal_size_limit = 67108864');
    db.function('lbot_icontains', { deterministic: true }, icontains);
    for (const f of DB_FILES(file)) tightenPrivateFile(f);
    return db;
  } catch (err) {
    db.close();
    throw toStoreError(err, file, 'opening the database');
  }
}

/**
 * Opens (creating and migrating when needed) the SQLite stores of `dataDir`. Throws
 * `store.unavailable` naming the path when the dir or database cannot be used for writing.
 */
export function openSqliteStores(dataDir: string, opts: SqliteStoresOptions = {}): SqliteStores {
  const dir = path.resolve(dataDir);
  prepareDataDir(dir);
  const file = path.join(dir, DB_FILE_NAME);
  const db = openDatabase(file);
  const clock = opts.clock ?? { now: () => Date.now() };
  const nowS = () => clock.now() / 1000;
  try {
    migrate(db, file, nowS());
  } catch (err) {
    db.close();
    throw toStoreError(err, file, 'preparing the database schema');
  }
  const store = new StoreDb(db, file, nowS, opts.commitWindowMs ?? 0);
  const blobs = new BlobFiles(path.join(dir, ARTIFACTS_DIR_NAME));
  let closed = false;
  return {
    dataDir: dir,
    dbFile: file,
    events: new SqliteEventLog(store),
    transcript: new SqliteTranscript(store),
    runs: new SqliteRunStore(store),
    state: new SqliteStateStore(store),
    storage: new SqliteStorageStore(store),
    artifacts: new SqliteArtifactStore(store, blobs),
    delivery: new SqliteDeliveryStore(store),
    knowledge: new SqliteKnowledgeStore(store),
    transaction: (fn) => store.write('writing a group of records', fn),
    commit: () => store.commit(),
    close() {
      if (closed) return;
      closed = true;
      try {
        store.commit();
      } finally {
        db.close();
      }
    },
  };
}
