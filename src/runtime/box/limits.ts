// Resource limits for sessions: a cgroup per session (v2 or v1) where the tree is writable, else rlimits.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, statSync, writeFileSync, accessSync, constants } from 'node:fs';
import path from 'node:path';
import { processTree } from './proc.js';

export type LimitsMode = 'cgroup2' | 'cgroup1' | 'rlimit';
export type LimitsPreference = 'auto' | 'cgroup' | 'rlimit';

const CGROUP_ROOT = '/sys/fs/cgroup';
const BOX_DIR = 'lbot-box';
const V1_CONTROLLERS = ['memory', 'pids', 'cpu'] as const;

export type LimitsProbe = { mode: LimitsMode; reason: string };

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function isCgroup2Root(): boolean {
  return existsSync(path.join(CGROUP_ROOT, 'cgroup.controllers'));
}

function ensureV2Base(): string {
  const base = path.join(CGROUP_ROOT, BOX_DIR);
  const wanted = ['memory', 'pids', 'cpu'];
  const enable = (dir: string) => {
    const have = readFileSync(path.join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/);
    const missing = wanted.filter((c) => !have.includes(c));
    if (missing.length > 0) writeFileSync(path.join(dir, 'cgroup.subtree_control'), missing.map((c) => `+${c}`).join(' '));
  };
  enable(CGROUP_ROOT);
  mkdirSync(base, { recursive: true });
  enable(base);
  return base;
}

/** Decides how limits are enforced on this machine (box.md §6.6 "Resource limits"). */
export function probeLimits(pref: LimitsPreference): LimitsProbe {
  if (pref === 'rlimit') return { mode: 'rlimit', reason: 'box.bwrap.limits is rlimit' };
  try {
    if (isCgroup2Root()) {
      if (!writable(CGROUP_ROOT)) return { mode: 'rlimit', reason: 'the cgroup v2 tree is not writable by this user' };
      ensureV2Base();
      return { mode: 'cgroup2', reason: `cgroup v2 at ${path.join(CGROUP_ROOT, BOX_DIR)}` };
    }
    const dirs = V1_CONTROLLERS.map((c) => path.join(CGROUP_ROOT, c));
    if (dirs.every((d) => existsSync(path.join(d, 'cgroup.procs')) && writable(d))) {
      for (const d of dirs) mkdirSync(path.join(d, BOX_DIR), { recursive: true });
      return { mode: 'cgroup1', reason: `cgroup v1 controllers ${V1_CONTROLLERS.join(', ')}` };
    }
    return { mode: 'rlimit', reason: 'no writable cgroup tree (memory, pids, cpu)' };
  } catch (err) {
    return { mode: 'rlimit', reason: `cgroup setup failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

export type SessionLimits = { cpus: number; memory_mb: number; pids_limit: number };

function writeOptional(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch {
    // knob not present on this kernel (e.g. swap accounting off)
  }
}

/** Creates the session's cgroup(s) with its limits; returns the directories processes must join. */
export function createSessionCgroup(mode: LimitsMode, key: string, limits: SessionLimits): string[] {
  const bytes = String(limits.memory_mb * 1024 * 1024);
  const quota = String(Math.max(1000, Math.round(limits.cpus * 100_000)));
  if (mode === 'cgroup2') {
    const dir = path.join(ensureV2Base(), key);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'memory.max'), bytes);
    writeOptional(path.join(dir, 'memory.swap.max'), '0');
    writeFileSync(path.join(dir, 'pids.max'), String(limits.pids_limit));
    writeFileSync(path.join(dir, 'cpu.max'), `${quota} 100000`);
    return [dir];
  }
  if (mode === 'cgroup1') {
    const dirs = V1_CONTROLLERS.map((c) => path.join(CGROUP_ROOT, c, BOX_DIR, key));
    for (const d of dirs) mkdirSync(d, { recursive: true });
    const [mem, pids, cpu] = dirs as [string, string, string];
    writeFileSync(path.join(mem, 'memory.limit_in_bytes'), bytes);
    writeOptional(path.join(mem, 'memory.memsw.limit_in_bytes'), bytes);
    writeFileSync(path.join(pids, 'pids.max'), String(limits.pids_limit));
    writeFileSync(path.join(cpu, 'cpu.cfs_period_us'), '100000');
    writeFileSync(path.join(cpu, 'cpu.cfs_quota_us'), quota);
    return dirs;
  }
  return [];
}

/** Moves a process (and everything it already forked) into the session cgroup(s). */
export function joinCgroup(dirs: readonly string[], pid: number): void {
  if (dirs.length === 0) return;
  const move = (p: number) => {
    for (const d of dirs) {
      try {
        writeFileSync(path.join(d, 'cgroup.procs'), String(p));
      } catch {
        // the process exited already
      }
    }
  };
  move(pid);
  // Children forked before the parent moved stay behind; they are blocked at the gate, so move them now.
  for (const p of processTree(pid).slice(1)) move(p);
}

/** Removes the session cgroup(s); retries briefly while killed processes are still being reaped. */
export async function removeSessionCgroup(dirs: readonly string[]): Promise<void> {
  for (const d of dirs) {
    for (let i = 0; i < 40; i++) {
      try {
        rmdirSync(d);
        break;
      } catch (err) {
        if (err instanceof Error && 'code' in err && err.code === 'ENOENT') break;
        await new Promise((r) => setTimeout(r, 25));
      }
    }
  }
}

/**
 * Removes session cgroups left empty for longer than `minAgeMs` (a session whose holder was killed
 * outside lbot). Live sessions always contain their holder, so their cgroups are never empty; the age
 * check keeps a cgroup that is being created right now.
 */
export function sweepStaleCgroups(minAgeMs: number): void {
  const roots = isCgroup2Root() ? [path.join(CGROUP_ROOT, BOX_DIR)] : V1_CONTROLLERS.map((c) => path.join(CGROUP_ROOT, c, BOX_DIR));
  for (const root of roots) {
    let names: string[];
    try {
      names = readdirSync(root, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      continue;
    }
    for (const name of names) {
      const dir = path.join(root, name);
      try {
        if (Date.now() - statSync(dir).mtimeMs < minAgeMs) continue;
        if (readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').trim() !== '') continue;
        rmdirSync(dir);
      } catch {
        // busy, gone, or not ours to remove
      }
    }
  }
}
