// Directories that hold lbot's unix sockets: created 0700, and a directory that is already there is
// used only when it is a real directory of this user that nobody else can enter. Anything else (a
// symlink, another user's directory, a group- or world-writable one) is refused: a socket placed
// there could be replaced or read by someone else.
import { chmodSync, lstatSync, mkdirSync, type Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LbotError, type ErrorCode } from '../core/errors.js';

function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

function lstatOrNull(dir: string): Stats | null {
  try {
    return lstatSync(dir);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return null;
    throw err;
  }
}

/** Why `st` may not hold our sockets, or null when it may. */
function unsafeBecause(st: Stats): string | null {
  if (st.isSymbolicLink()) return 'it is a symbolic link';
  if (!st.isDirectory()) return 'it is not a directory';
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `it is owned by uid ${st.uid}, not by uid ${uid} running lbot`;
  if ((st.mode & 0o077) !== 0) return `its mode is 0${(st.mode & 0o777).toString(8)}; group and others must have no access`;
  return null;
}

/**
 * Makes sure `dir` is a private socket directory: creates it 0700 when missing (with its parents when
 * `parents`), else checks it with lstat. Throws `code` naming the directory and the reason otherwise.
 */
export function ensureSocketDir(dir: string, code: ErrorCode, opts: { parents?: boolean } = {}): string {
  const refuse = (why: string): LbotError =>
    new LbotError(code, `refusing to use ${dir} for lbot's sockets: ${why}`, {
      details: { dir },
      hint: 'remove it (or fix its owner and mode to 0700), or use a shorter --data-dir so the sockets stay inside it',
    });
  try {
    if (opts.parents) mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 });
    let st = lstatOrNull(dir);
    if (st === null) {
      try {
        // Never recursive here: an existing path is never followed, only checked below.
        mkdirSync(dir, { mode: 0o700 });
        chmodSync(dir, 0o700); // exactly 0700 whatever the umask (a fresh directory of ours)
      } catch (err) {
        if (errnoOf(err) !== 'EEXIST') throw err;
      }
      st = lstatSync(dir);
    }
    const why = unsafeBecause(st);
    if (why !== null) throw refuse(why);
    return dir;
  } catch (err) {
    if (err instanceof LbotError) throw err;
    throw refuse(err instanceof Error ? err.message : String(err));
  }
}

/** The fallback directory under the temp dir for socket paths too long for the data dir: `<tmp>/lbot-<uid>`. */
export function tmpSocketDir(): string {
  return path.join(os.tmpdir(), `lbot-${process.getuid?.() ?? 'u'}`);
}
