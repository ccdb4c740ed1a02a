// /proc helpers: process identity (pid + start time + boot id), liveness, children.
import { readFileSync, readdirSync } from 'node:fs';

/** Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), or null if gone. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); start time is field 22.
    const state = fields[0];
    if (state === 'Z' || state === 'X') return null;
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

let cachedBootId: string | undefined;
/** The kernel boot id; records from an earlier boot never match it. */
export function bootId(): string {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = 'unknown';
    }
  }
  return cachedBootId;
}

export type ProcessIdentity = { pid: number; start: string; boot: string };

export function identityOf(pid: number): ProcessIdentity | null {
  const start = processStartTime(pid);
  return start === null ? null : { pid, start, boot: bootId() };
}

/** True when the process with this identity still runs (same pid, same start time, same boot). */
export function isIdentityAlive(id: ProcessIdentity): boolean {
  return id.boot === bootId() && processStartTime(id.pid) === id.start;
}

/** True when `pid` names a live process on this machine (one of another user's counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err instanceof Error && 'code' in err && err.code === 'EPERM';
  }
}

/** Direct children of a process (via /proc/<pid>/task/<tid>/children). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/)) {
        const n = Number(c);
        if (Number.isInteger(n) && n > 0) out.push(n);
      }
    } catch {
      // task gone
    }
  }
  return out;
}

/** A process and all its descendants, parents first. */
export function processTree(pid: number): number[] {
  const out: number[] = [];
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop();
    if (p === undefined) break;
    out.push(p);
    stack.push(...childrenOf(p));
  }
  return out;
}
