// Workspace quota policy: limits, the hard-stop margin, usage measurement and the quota error (box.md §9.4).
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
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

/**
 * Sum of apparent sizes (lstat) of everything under `dirs`, not following symlinks (a link counts its
 * own size); entries that vanish during the walk are ignored. Async, so it never blocks the loop.
 */
export async function measureUsage(dirs: readonly string[]): Promise<number> {
  let total = 0;
  const stack = [...dirs];
  while (stack.length > 0) {
    const dir = stack.pop();
    if (dir === undefined) break;
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const p = path.join(dir, name);
      try {
        const st = await lstat(p);
        total += st.size;
        if (st.isDirectory()) stack.push(p);
      } catch {
        // vanished while walking
      }
    }
  }
  return total;
}

export type QuotaPhase = 'before' | 'after' | 'during';

/** The box.quota_exceeded error for a phase, with used and limit bytes in the details. */
export function quotaExceeded(phase: QuotaPhase, used: number, limit: number, where: string, sessionId: string) {
  const when = phase === 'during' ? 'during execution' : `${phase} execution`;
  return boxError(
    'box.quota_exceeded',
    `workspace quota exceeded ${when}: used=${used} bytes limit=${limit} bytes workspace=${where} session_id=${sessionId}`,
    { phase, used_bytes: used, limit_bytes: limit, session_id: sessionId },
    'free space in the workspace or raise box.workspace_quota_mb',
  );
}
