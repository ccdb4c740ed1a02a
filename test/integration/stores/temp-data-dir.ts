// Temp data dirs for store tests, removed when the test's stores close.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqliteStores, type SqliteStores } from '../../../src/core/stores/sqlite/open.js';

/** A fresh empty directory under the OS temp dir. */
export function tempDir(prefix = 'lbot-stores-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** SQLite stores in a fresh temp data dir; `close()` closes them and deletes the dir. */
export function openTempStores(): SqliteStores {
  const dir = tempDir();
  const stores = openSqliteStores(dir);
  const close = stores.close.bind(stores);
  return Object.assign(stores, {
    close() {
      close();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}
