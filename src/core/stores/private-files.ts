// Files only their owner may read: the data dir (0700) and the secrets in it (0600), whatever the umask.
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, constants, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

const myUid = (): number | undefined => process.getuid?.();

/** Group/other permission bits. */
const OPEN_BITS = 0o077;

/** Files that mark a directory as an lbot data dir (one lbot may tighten). */
const DATA_DIR_MARKERS = ['lbot.db', 'lbot.config.json', 'serve.token', 'skills.lock.json'];

/**
 * Makes `dir` a directory only its owner can enter. A missing dir (and missing parents) is created
 * 0700; an existing dir owned by this user with group or other bits is tightened to 0700 when it is
 * empty or already an lbot data dir. Any other directory (a home dir, `/srv`, `/sys` named by
 * mistake) and a dir owned by someone else are left alone: lbot never re-modes what it did not make.
 */
export function ensurePrivateDir(dir: string): void {
  const created = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const st = lstatSync(dir);
  if (!st.isDirectory()) return; // the caller reports a path that is not a directory
  const uid = myUid();
  const ours = uid === undefined || st.uid === uid;
  if (!ours || (st.mode & 0o777) === PRIVATE_DIR_MODE) return;
  // A created dir gets exactly 0700 even under an unusual umask (which could drop the owner's own bits).
  if (created !== undefined || ((st.mode & OPEN_BITS) !== 0 && isDataDirLike(dir))) chmodSync(dir, PRIVATE_DIR_MODE);
}

function isDataDirLike(dir: string): boolean {
  try {
    const names = readdirSync(dir);
    return names.length === 0 || names.some((n) => DATA_DIR_MARKERS.includes(n));
  } catch {
    return false;
  }
}

/**
 * Takes group and other access away from an existing regular file of this user (files written by
 * older versions, or copied in by hand). Missing files, symlinks and other users' files are left as
 * they are; a filesystem that refuses the change (read-only mount) is not an error here.
 */
export function tightenPrivateFile(file: string): void {
  try {
    const st = lstatSync(file);
    const uid = myUid();
    if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (st.mode & OPEN_BITS) === 0) return;
    chmodSync(file, st.mode & 0o700);
  } catch {
    // missing, or not ours to change
  }
}

/**
 * Creates `file` empty and 0600 when it does not exist (O_CREAT with mode 0600, so no wider mode is
 * ever visible), and tightens it when it does. For files another library opens by name (SQLite).
 */
export function createPrivateFile(file: string): void {
  try {
    closeSync(openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, PRIVATE_FILE_MODE));
  } catch (err) {
    // An existing file is the opener's to judge (a read-only database gets SQLite's own error).
    if (!(err instanceof Error && 'code' in err && err.code === 'EEXIST')) throw err;
    tightenPrivateFile(file);
  }
}

/**
 * Writes `content` to `file` atomically with mode 0600: a fresh temp file in the same directory is
 * created exclusively with mode 0600, written, fsynced and renamed over `file`. Readers see the old
 * file or the new one, never a partial one, and never a moment where the file is group/world readable.
 */
export function writePrivateFile(file: string, content: string | Buffer): void {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, PRIVATE_FILE_MODE);
  try {
    try {
      let written = 0;
      while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
