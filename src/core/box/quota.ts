// Workspace quota policy: limits, the hard-stop margin, usage measurement and the quota error (box.md §9.4).
import { lstat, opendir } from 'node:fs/promises';
import path from 'node:path';
import { LbotError } from '../errors.js';
import { boxError } from './errors.js';

const MiB = 1024 * 1024;

/** How far a running command may go past the quota before the filesystem stops it (docs/box.md). */
export const QUOTA_MARGIN_BYTES = 4 * MiB;
/** Per-file size cap for every sandboxed process (RLIMIT_FSIZE), quota or not. */
export const MAX_FILE_BYTES = 512 * MiB;

export function quotaLimitBytes(quotaMb: number): number {
  return quotaMb * MiB;
}

/** Size of the size-limited filesystem that holds a quota'd session's workspace, /tmp and home. */
export function quotaFilesystemBytes(quotaMb: number): number {
  return quotaLimitBytes(quotaMb) + QUOTA_MARGIN_BYTES;
}

/** RLIMIT_FSIZE for a session: 512 MiB, or less when the quota (plus margin) is smaller. */
export function fileSizeLimitBytes(quotaMb: number): number {
  return quotaMb > 0 ? Math.min(MAX_FILE_BYTES, quotaFilesystemBytes(quotaMb)) : MAX_FILE_BYTES;
}

/** lstat calls in flight at once while walking one directory. */
const WALK_CONCURRENCY = 32;

function errnoOf(err: unknown): string {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : 'EIO';
}

/** Errors that only mean "it vanished (or was swapped) while walking"; anything else hides bytes. */
const VANISHED = new Set(['ENOENT', 'ENOTDIR']);

/**
 * The workspace could not be measured: a directory or entry under it cannot be read by lbot (a
 * `chmod 000` directory when lbot is not root, a path too long to open). Its bytes are unknown, so the
 * session counts as over quota; callers turn this into box.quota_exceeded with their phase.
 */
export function unmeasurableError(entry: string, errno: string) {
  return boxError(
    'box.quota_exceeded',
    `the workspace cannot be measured: ${entry} cannot be read by lbot (${errno}), so its size is unknown`,
    { reason: 'unreadable', path: entry, errno },
    `make it readable for lbot again (chmod u+rwx ${entry}) or remove it`,
  );
}

/** The unreadable path of an unmeasurableError, or null for any other error. */
export function unmeasurablePath(err: unknown): string | null {
  if (!(err instanceof LbotError) || err.code !== 'box.quota_exceeded' || err.details.reason !== 'unreadable') return null;
  return typeof err.details.path === 'string' ? err.details.path : null;
}

/**
 * Sum of apparent sizes (lstat) of everything under `dirs`, not following symlinks (a link counts its
 * own size); entries that vanish during the walk are ignored, a missing root counts 0. Anything lbot
 * cannot read (EACCES, EPERM, ENAMETOOLONG, …) throws unmeasurableError instead of counting as empty.
 * Async (never blocks the loop), with a bounded number of lstat calls in flight.
 */
export async function measureUsage(dirs: readonly string[]): Promise<number> {
  let total = 0;
  const stack = [...dirs];
  const statAll = async (dir: string, names: readonly string[]) => {
    await Promise.all(
      names.map(async (name) => {
        const p = path.join(dir, name);
        try {
          const st = await lstat(p);
          total += st.size;
          if (st.isDirectory()) stack.push(p);
        } catch (err) {
          const errno = errnoOf(err);
          if (!VANISHED.has(errno)) throw unmeasurableError(p, errno);
        }
      }),
    );
  };
  while (stack.length > 0) {
    const dir = stack.pop();
    if (dir === undefined) break;
    // Streamed, so a directory with millions of entries costs a bounded amount of memory.
    let batch: string[] = [];
    try {
      for await (const entry of await opendir(dir, { bufferSize: WALK_CONCURRENCY })) {
        batch.push(entry.name);
        if (batch.length >= WALK_CONCURRENCY) {
          await statAll(dir, batch);
          batch = [];
        }
      }
    } catch (err) {
      if (unmeasurablePath(err) !== null) throw err;
      const errno = errnoOf(err);
      if (VANISHED.has(errno)) continue;
      throw unmeasurableError(dir, errno);
    }
    await statAll(dir, batch);
  }
  return total;
}

/** `background`: the session's quota watcher (which outlives each command) stopped the session. */
export type QuotaPhase = 'before' | 'after' | 'during' | 'background';

function phaseText(phase: QuotaPhase): string {
  return phase === 'during' ? 'during execution' : phase === 'background' ? "by the session's processes" : `${phase} execution`;
}

/** The box.quota_exceeded error for a phase, with used and limit bytes in the details. */
export function quotaExceeded(phase: QuotaPhase, used: number, limit: number, where: string, sessionId: string) {
  return boxError(
    'box.quota_exceeded',
    `workspace quota exceeded ${phaseText(phase)}: used=${used} bytes limit=${limit} bytes workspace=${where} session_id=${sessionId}`,
    { phase, used_bytes: used, limit_bytes: limit, session_id: sessionId },
    'free space in the workspace or raise box.workspace_quota_mb',
  );
}

/** box.quota_exceeded for a workspace lbot could not measure (an unmeasurableError), with the phase. */
export function quotaUnreadable(phase: QuotaPhase, cause: unknown, limit: number, where: string, sessionId: string) {
  const entry = unmeasurablePath(cause) ?? where;
  const errno = cause instanceof LbotError && typeof cause.details.errno === 'string' ? cause.details.errno : 'EACCES';
  return boxError(
    'box.quota_exceeded',
    `workspace quota exceeded ${phaseText(phase)}: ${entry} cannot be read by lbot (${errno}), so the workspace's size is unknown and it counts as over quota; limit=${limit} bytes workspace=${where} session_id=${sessionId}`,
    { phase, reason: 'unreadable', path: entry, errno, limit_bytes: limit, session_id: sessionId },
    `make it readable for lbot again (chmod -R u+rwX ${entry}) or remove it`,
  );
}
