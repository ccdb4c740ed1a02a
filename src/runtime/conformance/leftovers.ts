// The process tree of a plugin for `lbot runner test`: which processes it started (children, detached
// ones included, and its process group), and which of them outlive it. Linux /proc only.
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { signalPid } from '../process/group.js';
import { processStartTime } from '../process/identity.js';

export type ProcessInfo = { pid: number; command: string };

type Stat = { pid: number; ppid: number; pgrp: number };

async function readStat(pid: number): Promise<Stat | null> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): state ppid pgrp ...
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(rest[1]);
    const pgrp = Number(rest[2]);
    return Number.isInteger(ppid) && Number.isInteger(pgrp) ? { pid, ppid, pgrp } : null;
  } catch {
    return null;
  }
}

async function commandOf(pid: number): Promise<string> {
  try {
    const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    return (
      raw
        .split('\0')
        .filter((s) => s !== '')
        .join(' ') || `pid ${pid}`
    );
  } catch {
    return `pid ${pid}`;
  }
}

/** True when /proc can be read (the process tree is observable). */
export async function processTreeObservable(): Promise<boolean> {
  try {
    return (await readStat(process.pid)) !== null;
  } catch {
    return false;
  }
}

/** Every live process started by one of `roots` (descendants, or members of its process group), roots excluded. */
export async function processesOf(roots: readonly number[]): Promise<ProcessInfo[]> {
  const names = await readdir('/proc').catch(() => [] as string[]);
  const stats = (await Promise.all(names.filter((n) => /^\d+$/.test(n)).map((n) => readStat(Number(n))))).filter((s): s is Stat => s !== null);
  const rootSet = new Set(roots);
  const found = new Set<number>();
  for (const s of stats) if (!rootSet.has(s.pid) && rootSet.has(s.pgrp)) found.add(s.pid);
  let grew = true;
  while (grew) {
    grew = false;
    for (const s of stats) {
      if (found.has(s.pid) || rootSet.has(s.pid)) continue;
      if (rootSet.has(s.ppid) || found.has(s.ppid)) {
        found.add(s.pid);
        grew = true;
      }
    }
  }
  return Promise.all([...found].map(async (pid) => ({ pid, command: await commandOf(pid) })));
}

/** Running, not a zombie: an exited process nobody reaped yet (an orphan waits for the system's init) is gone. */
function alive(pid: number): boolean {
  return processStartTime(pid) !== null;
}

/** Of `procs`, those still running after `settleMs`; they are killed (SIGKILL) so the suite leaves nothing behind. */
export async function reapLeftovers(procs: readonly ProcessInfo[], settleMs: number): Promise<ProcessInfo[]> {
  const until = performance.now() + settleMs;
  let left = procs.filter((p) => alive(p.pid));
  while (left.length > 0 && performance.now() < until) {
    await sleep(50);
    left = left.filter((p) => alive(p.pid));
  }
  for (const p of left) signalPid(p.pid, 'SIGKILL');
  return left;
}
