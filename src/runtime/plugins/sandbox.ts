// Runner plugin isolation (docs/host.md "The plugin boundary"): each plugin process runs in a bubblewrap
// sandbox with the box's hardening — own user, pid, ipc, uts (and, without the network permission,
// network) namespaces, seccomp, no new privileges, the sandbox uid as root, a cgroup with the plugin
// limits — seeing only the system, its runtime, lbot's package and its own directory read-only, plus a
// private home. Its stdio is its only channel to the host.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../package-root.js';
import type { Config } from '../../core/config.js';
import { LbotError } from '../../core/errors.js';
import { buildSeccompFilter, seccompArchFor } from '../../core/box/seccomp.js';
import { shQuote } from '../../core/box/shell.js';
import { SANDBOX_PATH } from '../box/bwrap-args.js';
import { preparePrivateBase } from '../box/bwrap-mounts.js';
import { procDevArgs, sandboxRunAs, stageArgv, systemBindArgs, systemLinks, type RunAs } from '../box/hardening.js';
import { findExecutable } from '../box/host-tools.js';
import { forgetProbe, probeKey, probeRemembered, rememberProbe } from './probe-memo.js';
import { tmpSocketDir } from '../socket-dir.js';
import { cgroupHost, createSessionCgroup, probeLimits, removeSessionCgroup, warnLimitsOnce, type LimitsPlan, type LimitsPreference } from '../box/limits.js';

export type IsolationMode = Config['plugins']['isolation'];
export type PluginLimits = Config['plugins']['limits'];

/** lbot's package root: its dist/ (the bootstrap, the SDK), node_modules/ and package.json are shown read-only. */
const PACKAGE_ENTRIES = ['package.json', 'dist', 'node_modules'];
/** Inside the sandbox: the private writable home of the plugin installation. */
export const SANDBOX_HOME = '/home';
const SANDBOX_HOSTNAME = 'lbot-plugin';
/** The fd the prelude opens the seccomp filter on for `bwrap --seccomp`. */
const SECCOMP_FD = 3;
/** Exit status of the prelude when a limit or the filter cannot be applied (the plugin never starts). */
const PRELUDE_FAILED = 125;

export type PluginSandboxOptions = {
  mode: IsolationMode;
  dataDir: string;
  limits: PluginLimits;
  /** Paths never shown even when they lie inside a directory the plugin sees (config file, data dir). */
  hidden?: readonly string[];
  bwrapBin?: string;
  limitsPreference?: LimitsPreference;
  sandboxUid?: number;
  sandboxGid?: number;
  cgroupRoot?: string;
  warn: (message: string) => void;
};

/** What one plugin process is granted, as `lbot runner show` prints it (`refused`: it would not start). */
export type PluginGrant = { isolation: 'sandbox' | 'none' | 'refused'; network: boolean; limits: PluginLimits | null; reason: string };

/** A sandboxed launch: the outer argv and env, and what lbot learns when the process ends. */
export type SandboxedLaunch = {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** Called once the outer process exited (its exit code, null if signalled or not started): reads why the kernel stopped it, then frees the cgroup. */
  settle(code: number | null): void;
  /** Set by settle(): "killed for exceeding its memory limit…", or null. */
  exitNote(): string | null;
};

type Tools = { bwrap: string; setpriv: string; unshare: string };
/** `memo`: the file that remembers this probe (probe-memo.ts), dropped when a sandboxed process fails. */
type Probe = { ok: true; tools: Tools; plan: LimitsPlan; filter: Buffer; memo?: string } | { ok: false; reason: string };

/** One probe per bwrap binary, data dir (its memo), cgroup root and limits preference per lbot process (it costs one sandbox start). */
const probes = new Map<string, Probe>();
const warned = new Set<string>();

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isInside(p: string, dir: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function depth(p: string): number {
  return p.split('/').filter(Boolean).length;
}

function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** `plugins.isolation` of `config` for a serve that is `remote` (non-loopback: auto means sandbox). */
export function isolationModeFor(config: Config, remote: boolean): IsolationMode {
  const mode = config.plugins.isolation;
  return remote && mode === 'auto' ? 'sandbox' : mode;
}

/** The sandbox of `config`'s plugin processes, keeping its per-installation homes under `dataDir`. */
export function pluginSandboxFor(config: Config, dataDir: string, opts: { warn: (message: string) => void; mode?: IsolationMode }): PluginSandbox {
  // The data dir holds the config, the database, serve.token and the box sockets; the rest are in tmp.
  const hidden = [dataDir, tmpSocketDir()];
  return new PluginSandbox({
    mode: opts.mode ?? config.plugins.isolation,
    dataDir,
    limits: config.plugins.limits,
    hidden,
    bwrapBin: config.box.bwrap.bin,
    limitsPreference: config.box.bwrap.limits,
    sandboxUid: config.box.bwrap.sandbox_uid,
    sandboxGid: config.box.bwrap.sandbox_gid,
    warn: opts.warn,
  });
}

export class PluginSandbox {
  readonly #opts: PluginSandboxOptions;
  readonly #runAs: RunAs | null;

  constructor(opts: PluginSandboxOptions) {
    this.#opts = opts;
    this.#runAs = sandboxRunAs(opts.sandboxUid, opts.sandboxGid);
  }

  get mode(): IsolationMode {
    return this.#opts.mode;
  }

  /** Whether plugins run sandboxed, and why (probes once; `auto` without a sandbox warns once per process). */
  resolve(): { isolation: 'sandbox' | 'none'; reason: string } {
    if (this.#opts.mode === 'none') return { isolation: 'none', reason: 'plugins.isolation is none' };
    const probe = this.#probe();
    if (probe.ok) return { isolation: 'sandbox', reason: `bubblewrap sandbox${this.#runAs ? ` as uid ${this.#runAs.uid}` : ''}, limits: ${probe.plan.mode}` };
    if (this.#opts.mode === 'sandbox') {
      throw new LbotError('runner.start_failed', `plugins.isolation is sandbox, but runner plugins cannot be sandboxed here: ${probe.reason}`, {
        details: { reason: 'sandbox_unavailable' },
        hint: 'install bubblewrap (apt-get install -y bubblewrap) and allow unprivileged user namespaces, or set plugins.isolation to none to run plugins unisolated',
      });
    }
    const message = `runner plugins run unisolated (plugins.isolation is auto and the sandbox is unavailable: ${probe.reason}); they can read everything lbot's user can`;
    if (!warned.has(message)) {
      warned.add(message);
      this.#opts.warn(message);
    }
    return { isolation: 'none', reason: probe.reason };
  }

  /** What a plugin with this network grant gets, without starting anything but the probe. */
  grant(network: boolean): PluginGrant {
    let r: { isolation: 'sandbox' | 'none'; reason: string };
    try {
      r = this.resolve();
    } catch (err) {
      return { isolation: 'refused', network: false, limits: null, reason: errText(err) };
    }
    // Unisolated, a plugin reaches whatever lbot's user can, the network included.
    return r.isolation === 'sandbox'
      ? { isolation: 'sandbox', network, limits: this.#opts.limits, reason: r.reason }
      : { isolation: 'none', network: true, limits: null, reason: r.reason };
  }

  /** The sandboxed argv of `cmd` for the plugin installed in `dir`, or null when plugins run unisolated. */
  wrap(
    cmd: { file: string; args: string[] },
    spec: { identity: string; dir: string; network: boolean; show?: readonly string[] },
    env: Record<string, string>,
  ): SandboxedLaunch | null {
    if (this.resolve().isolation === 'none') return null;
    const probe = this.#probe();
    if (!probe.ok) return null;
    return this.#launch(probe, cmd, spec, env, this.#homeOf(spec.identity, spec.dir));
  }

  #probe(): Probe {
    const bin = this.#opts.bwrapBin ?? 'bwrap';
    const key = [bin, this.#opts.dataDir, this.#opts.cgroupRoot ?? '', this.#opts.limitsPreference ?? 'auto', this.#runAs?.uid ?? ''].join('\0');
    let probe = probes.get(key);
    if (!probe) {
      probe = this.#detect(bin);
      probes.set(key, probe);
    }
    return probe;
  }

  #detect(bin: string): Probe {
    const bwrap = findExecutable(bin);
    if (!bwrap) return { ok: false, reason: `bubblewrap (${bin}) is not installed` };
    const setpriv = findExecutable('setpriv');
    const unshare = findExecutable('unshare');
    if (this.#runAs && (!setpriv || !unshare))
      return { ok: false, reason: 'setpriv and unshare (util-linux) are required next to bubblewrap when lbot runs as root' };
    const arch = seccompArchFor(process.arch);
    if (!arch) return { ok: false, reason: `no seccomp filter for the ${process.arch} architecture` };
    const limits = probeLimits(this.#opts.limitsPreference ?? 'auto', cgroupHost(this.#opts.cgroupRoot));
    if (!limits.usable) return { ok: false, reason: limits.reason };
    if (limits.warning) warnLimitsOnce(limits.warning, this.#opts.warn);
    const probe: Probe = {
      ok: true,
      tools: { bwrap, setpriv: setpriv ?? 'setpriv', unshare: unshare ?? 'unshare' },
      plan: limits.plan,
      filter: buildSeccompFilter(arch),
    };
    const memo = path.join(this.#privateDir(), 'probe.json');
    const key = probeKey({
      tools: [bwrap, setpriv ?? '', unshare ?? '', '/bin/sh', '/usr/bin/env'],
      plan: limits.plan,
      filter: probe.filter,
      runAs: this.#runAs,
    });
    if (probeRemembered(memo, key)) return { ...probe, memo };
    // The real launch, with a trivial command: whatever would refuse a plugin refuses the probe.
    let launch: SandboxedLaunch | undefined;
    try {
      launch = this.#launch(probe, { file: '/bin/sh', args: ['-c', 'exit 0'] }, { identity: 'lbot/sandbox-probe', dir: '/usr', network: false }, {}, null);
      const r = spawnSync(launch.file, launch.args, { env: launch.env, stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000, encoding: 'utf8' });
      if (r.error) return { ok: false, reason: `the sandbox probe failed: ${r.error.message}` };
      if (r.status !== 0)
        return {
          ok: false,
          reason: `bubblewrap cannot create the sandbox here (${r.stderr.trim().split('\n').slice(-2).join('; ') || `exit ${r.status ?? r.signal ?? 'unknown'}`}); unprivileged user namespaces may be disabled`,
        };
    } catch (err) {
      return { ok: false, reason: `the sandbox could not be prepared: ${errText(err)}` };
    } finally {
      launch?.settle(0);
    }
    rememberProbe(memo, key);
    return { ...probe, memo };
  }

  /** lbot-private files under the data dir: the seccomp filter and the per-installation homes. */
  #privateDir(): string {
    const dir = path.join(this.#opts.dataDir, 'plugin-sandbox');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  #filterFile(filter: Buffer): string {
    const file = path.join(this.#privateDir(), `seccomp-${createHash('sha256').update(filter).digest('hex').slice(0, 12)}.bpf`);
    if (!existsSync(file)) writeFileSync(file, filter, { mode: 0o600 });
    return file;
  }

  /** The private writable directory of one plugin installation (identity + directory), its home and cache. */
  #homeOf(identity: string, dir: string): string {
    const name = `${identity.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 60)}-${createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 10)}`;
    const home = path.join(this.#privateDir(), 'homes', name);
    mkdirSync(home, { recursive: true, mode: 0o700 });
    if (this.#runAs) chownSync(home, this.#runAs.uid, this.#runAs.gid);
    return home;
  }

  /** `home` null: an empty tmpfs (the probe). */
  #launch(
    probe: Extract<Probe, { ok: true }>,
    cmd: { file: string; args: string[] },
    spec: { identity: string; dir: string; network: boolean; show?: readonly string[] },
    env: Record<string, string>,
    home: string | null,
  ): SandboxedLaunch {
    const runAs = this.#runAs;
    // What the plugin sees read-only at its host path: its directory, lbot's package, lbot's node.
    const shown = new Map<string, string>();
    shown.set(spec.dir, realOr(spec.dir));
    for (const entry of PACKAGE_ENTRIES) {
      const p = path.join(PACKAGE_ROOT, entry);
      if (existsSync(p)) shown.set(p, realOr(p));
    }
    if (!isInside(process.execPath, '/usr')) shown.set(process.execPath, realOr(process.execPath));
    for (const p of this.#resolutionPaths(spec.dir)) shown.set(p, realOr(p));
    // An interpreter the plugin runs on outside /usr (a venv's base, pyenv), read-only like the rest.
    for (const p of spec.show ?? []) if (!isInside(p, '/usr') && existsSync(p)) shown.set(p, realOr(p));
    const stage = runAs ? new SharedStage(this.#stageDir()) : null;
    const src = (p: string, kind: 'dir' | 'file') => (stage ? stage.add(p, kind) : p);
    const ro = [...shown.entries()].sort((a, b) => depth(a[0]) - depth(b[0]));
    const a: string[] = [probe.tools.bwrap, '--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
    if (!spec.network) a.push('--unshare-net');
    a.push('--hostname', SANDBOX_HOSTNAME, '--clearenv');
    const inner: Record<string, string> = { ...env, HOME: SANDBOX_HOME, TMPDIR: '/tmp' };
    for (const [k, v] of Object.entries(inner)) a.push('--setenv', k, v);
    a.push(...systemBindArgs(systemLinks(), spec.network));
    a.push(...procDevArgs('minimal'));
    a.push('--tmpfs', '/tmp', ...(home ? ['--bind', src(home, 'dir'), SANDBOX_HOME] : ['--tmpfs', SANDBOX_HOME]));
    for (const [dest, source] of ro) a.push('--ro-bind', src(source, statSync(source).isDirectory() ? 'dir' : 'file'), dest);
    // The data dir or the config inside a shown directory (a plugin developed next to its data) stays hidden.
    for (const h of this.#opts.hidden ?? []) {
      if (!ro.some(([dest]) => isInside(h, dest)) || !existsSync(h)) continue;
      if (statSync(h).isDirectory()) a.push('--tmpfs', h);
      else a.push('--ro-bind', '/dev/null', h);
    }
    // `lbot/sdk` resolves for a plugin without its own copy (found last, after every node_modules of its
    // directory), so the bootstrap needs no module hook and its loader thread. A link: it shows nothing more.
    if (!ro.some(([dest]) => isInside(dest, '/node_modules') || isInside('/node_modules', dest)))
      a.push('--dir', '/node_modules', '--symlink', PACKAGE_ROOT, '/node_modules/lbot');
    // bwrap's --chdir exports PWD; env drops it so the plugin's env stays the allowlist.
    a.push('--remount-ro', '/', '--seccomp', String(SECCOMP_FD), '--chdir', spec.dir, '--', '/usr/bin/env', '-u', 'PWD', '--', cmd.file, ...cmd.args);

    const cgroups = createSessionCgroup(probe.plan, `plugin-${randomBytes(6).toString('hex')}`, {
      cpus: this.#opts.limits.cpus,
      memory_mb: this.#opts.limits.memory_mb,
      pids_limit: this.#opts.limits.pids,
    });
    // The prelude runs before anything of the plugin: into its cgroup (fail-closed), the filter on fd 3.
    const prelude = cgroups.map((d) => `echo $$ > ${shQuote(path.join(d, 'cgroup.procs'))} || exit ${PRELUDE_FAILED}`);
    if (probe.plan.mode === 'rlimit') prelude.push(`ulimit -d ${this.#opts.limits.memory_mb * 1024} || exit ${PRELUDE_FAILED}`);
    prelude.push(`exec ${SECCOMP_FD}< ${shQuote(this.#filterFile(probe.filter))} || exit ${PRELUDE_FAILED}`);
    const argv =
      stage && runAs
        ? stageArgv({ ...runAs, dir: stage.dir, binds: stage.binds }, a, probe.tools.unshare, probe.tools.setpriv, prelude)
        : ['/bin/sh', '-c', [...prelude, 'exec "$@"'].join('\n'), 'lbot-plugin', ...a];
    const [file = '/bin/sh', ...args] = argv;
    let note: string | null = null;
    let settled = false;
    return {
      file,
      args,
      // No family marker outside: the sandbox's own init is in the process group, but it is no process of
      // the plugin's (it ends by itself once the plugin's processes have), so it never counts as a leftover.
      env: { PATH: SANDBOX_PATH, LANG: 'C.UTF-8' },
      settle: (code) => {
        if (settled) return;
        settled = true;
        // A failed exit may be the sandbox refusing to start: the next process probes again.
        if (code !== null && code !== 0 && probe.memo) forgetProbe(probe.memo);
        note = limitNote(cgroups, this.#opts.limits);
        void removeSessionCgroup(cgroups);
      },
      exitNote: () => note,
    };
  }

  /**
   * What Node's module resolution reads above the plugin dir: the nearest package.json (the module
   * type) and every node_modules on the way up (hoisted dependencies); nothing inside a hidden path.
   */
  #resolutionPaths(dir: string): string[] {
    const out: string[] = [];
    let typeFound = false;
    for (let d = path.dirname(path.resolve(dir)); ; d = path.dirname(d)) {
      if (!(this.#opts.hidden ?? []).some((h) => isInside(d, h))) {
        const pkg = path.join(d, 'package.json');
        if (!typeFound && existsSync(pkg)) {
          out.push(pkg);
          typeFound = true;
        }
        const modules = path.join(d, 'node_modules');
        if (existsSync(modules)) out.push(modules);
      }
      if (d === path.dirname(d)) return out;
    }
  }

  /** Root hosts: stage mount points under a root-owned base the sandbox uid can traverse. */
  #stageDir(): string {
    const base = path.join(os.tmpdir(), 'lbot-plugins-0', createHash('sha256').update(path.resolve(this.#opts.dataDir)).digest('hex').slice(0, 16));
    preparePrivateBase(base);
    return base;
  }
}

/**
 * Stage mount points shared by every launch of this lbot (each launch binds them in its own mount
 * namespace): named after their source, created once, safe when launches race.
 */
class SharedStage {
  readonly binds: { source: string; target: string }[] = [];

  constructor(readonly dir: string) {}

  add(source: string, kind: 'dir' | 'file'): string {
    const target = path.join(this.dir, `${createHash('sha256').update(source).digest('hex').slice(0, 16)}.${kind}`);
    if (!existsSync(target)) {
      if (kind === 'dir') mkdirSync(target, { recursive: true, mode: 0o755 });
      else writeFileSync(target, '', { mode: 0o644, flag: 'a' });
    }
    this.binds.push({ source, target });
    return target;
  }
}

function counter(file: string, name: string): number {
  try {
    const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(readFileSync(file, 'utf8'));
    return m?.[1] ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Why the kernel stopped a plugin, from its cgroup's counters (v1 memory.oom_control, v2 memory.events). */
function limitNote(cgroups: readonly string[], limits: PluginLimits): string | null {
  const notes: string[] = [];
  const oom = cgroups.reduce((n, d) => n + counter(path.join(d, 'memory.oom_control'), 'oom_kill') + counter(path.join(d, 'memory.events'), 'oom_kill'), 0);
  if (oom > 0) notes.push(`it was killed for exceeding its memory limit of ${limits.memory_mb} MB (plugins.limits.memory_mb)`);
  const forks = cgroups.reduce((n, d) => n + counter(path.join(d, 'pids.events'), 'max'), 0);
  if (forks > 0) notes.push(`${forks} of its process starts were refused at its limit of ${limits.pids} processes (plugins.limits.pids)`);
  return notes.length > 0 ? notes.join('; ') : null;
}
