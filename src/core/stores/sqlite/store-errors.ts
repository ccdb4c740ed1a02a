// Turns better-sqlite3 and filesystem failures into LbotErrors that name the file and say what to do.
import Database from 'better-sqlite3';
import { LbotError } from '../../errors.js';

const DATA_DIR_HINT = 'point --data-dir (or LBOT_HOME) at a writable directory';

/** `store.unavailable` for a path lbot cannot use. */
export function storeUnavailable(path: string, reason: string, cause?: unknown): LbotError {
  return new LbotError('store.unavailable', `${path}: ${reason}`, { details: { path }, hint: DATA_DIR_HINT, cause });
}

/** The message of anything thrown, without the path Node appends to fs errors (callers name the path). */
export function reasonOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const message = err.message.replace(/, \w+ '[^']*'(?: -> '[^']*')?$/, '');
  const code = 'code' in err && typeof err.code === 'string' ? err.code : null;
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

/**
 * Maps a failure inside a store call: SQLite busy/locked (another process held the write lock
 * past the busy timeout) becomes `store.locked`; I/O, permission and corruption failures become
 * `store.unavailable` naming the database file. LbotErrors and anything else pass through.
 */
export function toStoreError(err: unknown, file: string, doing: string): unknown {
  if (!(err instanceof Database.SqliteError)) return err;
  const code = err.code;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new LbotError('store.locked', `${file}: the database stayed locked by another process while ${doing}; retry, or stop the process that holds it`, {
      retryable: true,
      details: { path: file, sqlite_code: code },
      cause: err,
    });
  }
  if (/^SQLITE_(READONLY|IOERR|FULL|CANTOPEN|CORRUPT|NOTADB|PERM|AUTH|PROTOCOL)/.test(code)) {
    return new LbotError('store.unavailable', `${file}: ${err.message} (${code}) while ${doing}`, {
      details: { path: file, sqlite_code: code },
      hint: DATA_DIR_HINT,
      cause: err,
    });
  }
  return err;
}

/** True for a UNIQUE / PRIMARY KEY violation. */
export function isUniqueViolation(err: unknown): boolean {
  return err instanceof Database.SqliteError && (err.code === 'SQLITE_CONSTRAINT_UNIQUE' || err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY');
}

/** True for a FOREIGN KEY violation. */
export function isForeignKeyViolation(err: unknown): boolean {
  return err instanceof Database.SqliteError && err.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
