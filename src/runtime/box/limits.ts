// Resource limits for sessions (box.md §6.6 "Resource limits"): a cgroup per session — cgroup v2 at the
// root of the tree or in a delegated subtree this user owns, or the v1 memory/pids/cpu hierarchies —
// and rlimits only as an announced fallback. `limits: cgroup` fails closed; a failed join fails the exec.
import { accessSync, constants, existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LbotError } from '../../core/errors.js';
import { processTree } from '../process/identity.js';

export type LimitsMode = 'cgroup2' | 'cgroup1' | 'rlimit';
export type LimitsPreference = 'auto' | 'cgroup' | 'rlimit';

export const CGROUP_ROOT = '/sys/fs/cgroup';
const BOX_DIR = 'lbot-box';
/** Controllers a cgroup tree must offer to be used at all; cpu is applied when present. */
const REQUIRED = ['memory', 'pids'] as const;
const V2_WANTED = ['memory', 'pids', 'cpu'] as const;

/** What rlimit mode caps and what it does not (also in docs/box.md). */
export const RLIMIT_SUMMARY =
  'memory is capped per process, not per session (RLIMIT_DATA), CPU time per process of one-shot commands ' +
  '(RLIMIT_CPU, timeout + 5 s), processes per uid (RLIMIT_NPROC); nothing caps a session as a whole and cpus is not enforced';

/** What the probe looks at; tests substitute a temp dir for /sys/fs/cgroup and a fake access check. */
export type CgroupHost = {
  /** Where the cgroup filesystems are mounted (default /sys/fs/cgroup). */
  root: string;
  /** The text of /proc/self/cgroup. */
  selfCgroup: string;
  /** Whether this process may write the path (default: access(2) W_OK). */
  canWrite: (p: string) => boolean;
  uid: number;
  /** Whether a systemd user manager is reachable (systemd-run --user --scope would work). */
  systemdUser: boolean;
};

function accessWritable(p: string): boolean {
  try {
    accessSync(p, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The facts of this machine, with the cgroup root as a parameter. */
export function cgroupHost(root: string = CGROUP_ROOT): CgroupHost {
  let selfCgroup = '';
  try {
    selfCgroup = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    // no procfs: no delegated subtree can be found
  }
  const uid = process.getuid?.() ?? -1;
  const runtimeDir = process.env.XDG_RUNTIME_DIR ?? `/run/user/${uid}`;
  const systemdUser = existsSync('/run/systemd/system') && existsSync(path.join(runtimeDir, 'systemd', 'private'));
  return { root, selfCgroup, canWrite: accessWritable, uid, systemdUser };
}

/** The cgroup tree sessions are created in: each base is the `lbot-box` directory session cgroups go under. */
export type CgroupPlan =
  { mode: 'cgroup2'; parent: string; base: string; cpu: boolean; delegated: boolean } | { mode: 'cgroup1'; memory: string; pids: string; cpu: string | null };
export type LimitsPlan = CgroupPlan | { mode: 'rlimit' };

export type LimitsProbe = { usable: true; plan: LimitsPlan; reason: string; warning: string | null } | { usable: false; reason: string };

function words(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}

function hasProcesses(dir: string): boolean {
  return words(path.join(dir, 'cgroup.procs')).length > 0;
}

/** `/proc/self/cgroup` as controller → path (`''` is the v2 entry `0::/path`). */
function ownCgroups(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(\/.*)$/.exec(line.trim());
    if (!m || m[1] === undefined || m[2] === undefined) continue;
    if (m[1] === '') out.set('', m[2]);
    else for (const c of m[1].split(',')) out.set(c, m[2]);
  }
  return out;
}

/** `dir` and its ancestors up to, not including, `top` (nearest first). */
function ancestors(top: string, rel: string): string[] {
  const out: string[] = [];
  for (let r = path.posix.normalize(rel); r !== '/' && r !== '.' && r !== ''; r = path.posix.dirname(r)) out.push(path.join(top, r));
  return out;
}

function v2Tree(host: CgroupHost): { plan: CgroupPlan } | { missing: string } {
  const root = host.root;
  const own = ownCgroups(host.selfCgroup).get('');
  const rootWritable = host.canWrite(root) && host.canWrite(path.join(root, 'cgroup.subtree_control'));
  const candidates = rootWritable ? [root] : own !== undefined ? ancestors(root, own) : [];
  const rejected: string[] = [];
  for (const dir of candidates) {
    const available = words(path.join(dir, 'cgroup.controllers'));
    const lacking = REQUIRED.filter((c) => !available.includes(c));
    if (lacking.length > 0) {
      rejected.push(`${dir}: controller${lacking.length > 1 ? 's' : ''} ${lacking.join(', ')} not delegated`);
      continue;
    }
    const files = ['', 'cgroup.subtree_control', 'cgroup.procs'].map((f) => path.join(dir, f));
    if (!files.every((f) => host.canWrite(f))) {
      rejected.push(`${dir}: not writable by uid ${host.uid}`);
      continue;
    }
    // A non-root cgroup with processes of its own cannot hand controllers to children ("no internal processes").
    const enabled = words(path.join(dir, 'cgroup.subtree_control'));
    if (dir !== root && !REQUIRED.every((c) => enabled.includes(c)) && hasProcesses(dir)) {
      rejected.push(`${dir}: holds processes, so its controllers cannot be enabled for children`);
      continue;
    }
    return { plan: { mode: 'cgroup2', parent: dir, base: path.join(dir, BOX_DIR), cpu: available.includes('cpu'), delegated: dir !== root } };
  }
  const where =
    own === undefined ? 'this process has no cgroup v2 entry in /proc/self/cgroup' : `checked ${rejected.slice(0, 4).join('; ') || `no subtree of ${own}`}`;
  const systemd = host.systemdUser
    ? 'start lbot in a delegated scope of the systemd user manager (systemd-run --user --scope lbot …)'
    : 'no systemd user manager is running, so systemd-run --user --scope cannot provide one';
  return {
    missing: `cgroup v2: ${root} is not writable by uid ${host.uid} and no delegated subtree of this process's cgroup is usable (${where}); ${systemd}`,
  };
}

function v1Tree(host: CgroupHost): { plan: CgroupPlan } | { missing: string } {
  const own = ownCgroups(host.selfCgroup);
  const pick = (ctrl: string): { base: string } | { missing: string } => {
    const hier = path.join(host.root, ctrl);
    if (!existsSync(path.join(hier, 'cgroup.procs'))) return { missing: `no cgroup v1 ${ctrl} hierarchy at ${hier}` };
    const rel = own.get(ctrl);
    // The hierarchy's root first (lbot as root), then this process's own cgroup and its parents (delegated).
    const candidates = [hier, ...(rel !== undefined ? ancestors(hier, rel) : [])];
    const dir = candidates.find((d) => host.canWrite(d) && host.canWrite(path.join(d, 'cgroup.procs')));
    if (dir !== undefined) return { base: path.join(dir, BOX_DIR) };
    return {
      missing: `the cgroup v1 ${ctrl} hierarchy (${hier}${rel !== undefined && rel !== '/' ? ` and this process's cgroup ${rel}` : ''}) is not writable by uid ${host.uid}`,
    };
  };
  const memory = pick('memory');
  const pids = pick('pids');
  const cpu = pick('cpu');
  if ('base' in memory && 'base' in pids) return { plan: { mode: 'cgroup1', memory: memory.base, pids: pids.base, cpu: 'base' in cpu ? cpu.base : null } };
  return { missing: [memory, pids].flatMap((p) => ('missing' in p ? [p.missing] : [])).join('; ') };
}

/** Decides which cgroup tree to use without changing anything; `missing` names what is not there. */
export function findCgroupTree(host: CgroupHost): { plan: CgroupPlan } | { missing: string } {
  try {
    statSync(host.root);
  } catch (err) {
    const code = errnoOf(err);
    return {
      missing: code === 'ENOENT' ? `no cgroup filesystem at ${host.root}` : `${host.root} cannot be reached by uid ${host.uid} (${code ?? errText(err)})`,
    };
  }
  return existsSync(path.join(host.root, 'cgroup.controllers')) ? v2Tree(host) : v1Tree(host);
}

function enableV2(dir: string, cpu: boolean): void {
  const file = path.join(dir, 'cgroup.subtree_control');
  const have = words(file);
  const missing = V2_WANTED.filter((c) => (c !== 'cpu' || cpu) && !have.includes(c));
  if (missing.length > 0) writeFileSync(file, missing.map((c) => `+${c}`).join(' '));
}

/** Creates the `lbot-box` base(s) and enables the controllers; throws when the tree refuses. */
function prepareCgroupTree(plan: CgroupPlan): void {
  if (plan.mode === 'cgroup2') {
    enableV2(plan.parent, plan.cpu);
    mkdirSync(plan.base, { recursive: true });
    enableV2(plan.base, plan.cpu);
    return;
  }
  for (const d of [plan.memory, plan.pids, plan.cpu]) if (d !== null) mkdirSync(d, { recursive: true });
}

function describe(plan: CgroupPlan): string {
  if (plan.mode === 'cgroup2') {
    const cpu = plan.cpu ? '' : ' (no cpu controller: cpus is not enforced)';
    return `cgroup v2 at ${plan.base}${plan.delegated ? ' (delegated subtree)' : ''}${cpu}`;
  }
  return `cgroup v1 controllers memory, pids${plan.cpu ? ', cpu' : ' (no writable cpu hierarchy: cpus is not enforced)'}`;
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Decides how limits are enforced. `cgroup`: a usable cgroup tree or nothing (the probe is not usable);
 * `auto`: cgroups when usable, else rlimits with a warning; `rlimit`: rlimits as configured, with a warning.
 */
export function probeLimits(pref: LimitsPreference, host: CgroupHost = cgroupHost()): LimitsProbe {
  if (pref === 'rlimit') {
    return {
      usable: true,
      plan: { mode: 'rlimit' },
      reason: `rlimits (box.bwrap.limits is rlimit): ${RLIMIT_SUMMARY}`,
      warning: `box.bwrap.limits is rlimit: ${RLIMIT_SUMMARY}`,
    };
  }
  let missing: string;
  const found = findCgroupTree(host);
  if ('plan' in found) {
    try {
      prepareCgroupTree(found.plan);
      const reason = describe(found.plan);
      const noCpu = found.plan.mode === 'cgroup2' ? !found.plan.cpu : found.plan.cpu === null;
      return { usable: true, plan: found.plan, reason, warning: noCpu ? `box limits: ${reason}` : null };
    } catch (err) {
      missing = `setting up ${found.plan.mode === 'cgroup2' ? found.plan.base : found.plan.memory} failed: ${errText(err)}`;
    }
  } else missing = found.missing;
  if (pref === 'cgroup') return { usable: false, reason: `box.bwrap.limits is cgroup, but no usable cgroup tree: ${missing}` };
  return {
    usable: true,
    plan: { mode: 'rlimit' },
    reason: `rlimits, not cgroups (${missing}): ${RLIMIT_SUMMARY}`,
    warning: `box limits fall back to rlimits because no usable cgroup tree exists (${missing}): ${RLIMIT_SUMMARY}; set box.bwrap.limits to cgroup to refuse instead`,
  };
}

const warned = new Set<string>();

/** Prints a limits warning once per process (default: lbot's warning line on stderr). */
export function warnLimitsOnce(message: string, warn?: (message: string) => void): void {
  if (warned.has(message)) return;
  warned.add(message);
  if (warn) warn(message);
  else process.stderr.write(`lbot: warning: ${message}\n`);
}

export type SessionLimits = { cpus: number; memory_mb: number; pids_limit: number };

function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

function limitsUnavailable(message: string, details: Record<string, unknown>, cause?: unknown): LbotError {
  return new LbotError('box.unavailable', message, {
    details: { reason: 'limits_unavailable', ...details },
    cause,
    hint: 'lbot box status and lbot doctor show the limits mode; box.bwrap.limits chooses it',
  });
}

function writeOptional(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch {
    // knob not present on this kernel (e.g. swap accounting off)
  }
}

/** Creates the session's cgroup(s) with its limits; returns the directories processes must join. */
export function createSessionCgroup(plan: LimitsPlan, key: string, limits: SessionLimits): string[] {
  if (plan.mode === 'rlimit') return [];
  const bytes = String(limits.memory_mb * 1024 * 1024);
  const quota = String(Math.max(1000, Math.round(limits.cpus * 100_000)));
  const made: string[] = [];
  try {
    if (plan.mode === 'cgroup2') {
      prepareCgroupTree(plan);
      const dir = path.join(plan.base, key);
      mkdirSync(dir);
      made.push(dir);
      writeFileSync(path.join(dir, 'memory.max'), bytes);
      writeOptional(path.join(dir, 'memory.swap.max'), '0');
      writeFileSync(path.join(dir, 'pids.max'), String(limits.pids_limit));
      if (plan.cpu) writeFileSync(path.join(dir, 'cpu.max'), `${quota} 100000`);
      return made;
    }
    prepareCgroupTree(plan);
    const mem = path.join(plan.memory, key);
    const pids = path.join(plan.pids, key);
    const cpu = plan.cpu !== null ? path.join(plan.cpu, key) : null;
    for (const d of [mem, pids, cpu]) {
      if (d === null) continue;
      mkdirSync(d);
      made.push(d);
    }
    writeFileSync(path.join(mem, 'memory.limit_in_bytes'), bytes);
    writeOptional(path.join(mem, 'memory.memsw.limit_in_bytes'), bytes);
    writeFileSync(path.join(pids, 'pids.max'), String(limits.pids_limit));
    if (cpu !== null) {
      writeFileSync(path.join(cpu, 'cpu.cfs_period_us'), '100000');
      writeFileSync(path.join(cpu, 'cpu.cfs_quota_us'), quota);
    }
    return made;
  } catch (err) {
    for (const d of made.reverse()) {
      try {
        rmdirSync(d);
      } catch {
        // already gone
      }
    }
    throw limitsUnavailable(`could not create the session cgroup (${errnoOf(err) ?? 'error'}): ${errText(err)}`, { errno: errnoOf(err) ?? null }, err);
  }
}

/**
 * Moves a process (and everything it already forked) into the session cgroup(s). A process that exited
 * meanwhile (ESRCH) is skipped; any other failure (EACCES, EBUSY, a removed cgroup…) throws
 * box.unavailable: the caller must kill the process, never let it run outside its limits.
 */
export function joinCgroup(dirs: readonly string[], pid: number): void {
  if (dirs.length === 0) return;
  const move = (p: number): boolean => {
    for (const d of dirs) {
      try {
        writeFileSync(path.join(d, 'cgroup.procs'), String(p));
      } catch (err) {
        const code = errnoOf(err);
        if (code === 'ESRCH') return false;
        throw limitsUnavailable(
          `could not move process ${p} into the session cgroup ${d} (${code ?? 'error'}: ${errText(err)}); it was stopped instead of running without its limits`,
          { cgroup: d, errno: code ?? null },
          err,
        );
      }
    }
    return true;
  };
  if (!move(pid)) return;
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
        if (errnoOf(err) === 'ENOENT') break;
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
export function sweepStaleCgroups(minAgeMs: number, host: CgroupHost = cgroupHost()): void {
  const found = findCgroupTree(host);
  if (!('plan' in found)) return;
  const plan = found.plan;
  const roots = plan.mode === 'cgroup2' ? [plan.base] : [plan.memory, plan.pids, plan.cpu].filter((d): d is string => d !== null);
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
