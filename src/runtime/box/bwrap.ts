// The bwrap backend: a detached holder per session owns its namespaces; every exec enters them with nsenter.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { fileURLToPath } from 'node:url';
import { statfs } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { LbotError } from '../../core/errors.js';
import { fileSizeLimitBytes, measureUsage, quotaFilesystemBytes } from '../../core/box/quota.js';
import { argvToCommand } from '../../core/box/shell.js';
import { buildSeccompFilter, deniedSyscallNames, seccompArchFor } from '../../core/box/seccomp.js';
import { sandboxRunAs, systemLinks } from './hardening.js';
import { Stage, assertSandboxAccess, pinMount, preparePrivateBase, verifyPins } from './bwrap-mounts.js';
import type { BoxSpec, ManagedProcessSpec } from '../../core/box/model.js';
import { writeJsonAtomic, readJson } from './files.js';
import { identityOf, isIdentityAlive, type ProcessIdentity } from '../process/identity.js';
import { signalPid } from '../process/group.js';
import {
  cgroupHost,
  createSessionCgroup,
  joinCgroup,
  probeLimits,
  removeSessionCgroup,
  sweepStaleCgroups,
  warnLimitsOnce,
  type LimitsMode,
  type LimitsPlan,
  type LimitsPreference,
} from './limits.js';
import { runProcess, type RunOutcome } from './run-process.js';
import { findExecutable, probeCommand } from './host-tools.js';
import { HELPER_ENV, buildEnterArgv, buildExecScript, buildHolderArgv, orderMounts, type HostTools, type ShellLimits, type SystemLink } from './bwrap-args.js';
import {
  execRunOptions,
  type BackendProbe,
  type QuotaWatchPlan,
  type ExecRequest,
  type ProcessLaunch,
  type SandboxBackend,
  type SessionRecord,
  type StartContext,
} from './backend.js';

const IdentitySchema = z.strictObject({ pid: z.number().int(), start: z.string(), boot: z.string() });

const BwrapStateSchema = z.strictObject({
  dir: z.string(),
  holder: IdentitySchema,
  ns: IdentitySchema,
  cgroups: z.array(z.string()),
  limits_mode: z.enum(['cgroup2', 'cgroup1', 'rlimit']),
  volume: z.boolean(),
  workspace_dir: z.string(),
  tmp_dir: z.string(),
  home_dir: z.string(),
  /** Root hosts: the unprivileged uid/gid the sandbox and every exec run as. */
  run_as: z.strictObject({ uid: z.number().int(), gid: z.number().int() }).nullable().default(null),
});
type BwrapState = z.infer<typeof BwrapStateSchema>;

const OPEN_FILES = 256;
/** RLIMIT_CPU of a one-shot exec in rlimit mode: its timeout plus this many seconds. */
const CPU_GRACE_SEC = 5;
/** The holder's stdio slot that carries the seccomp filter to `bwrap --seccomp`. */
const HOLDER_SECCOMP_FD = 5;
/** How often a holder's keeper checks its TTL and whether its state dir still exists. */
const KEEPER_INTERVAL_SEC = 5;
const HOLDER_START_TIMEOUT_MS = 10_000;

export type BwrapOptions = {
  bin: string;
  baseDir: string;
  limits: LimitsPreference;
  /** lbot's node binary, bound into sandboxes for the file tools' helper. */
  nodeBinary: string | null;
  /** Root hosts: the unprivileged uid/gid sandboxes run as (box.bwrap.sandbox_uid / sandbox_gid). */
  sandboxUid?: number;
  sandboxGid?: number;
  /** The compiled seccomp exec helper (dist/native/lbot-seccomp-exec). */
  seccompHelper?: string;
  /** Where the cgroup filesystems are mounted (default /sys/fs/cgroup; tests point it at a temp dir). */
  cgroupRoot?: string;
  /** Where the limits warning goes (once per process); default: stderr. */
  warn?: (message: string) => void;
};

// The same relative path from src/runtime/box (tests) and dist/runtime/box (the built CLI).
const DEFAULT_SECCOMP_HELPER = fileURLToPath(new URL('../../../dist/native/lbot-seccomp-exec', import.meta.url));

type Capabilities = {
  tools: HostTools & { bwrap: string };
  limits: LimitsMode;
  limitsPlan: LimitsPlan;
  limitsReason: string;
  volume: boolean;
  /** util-linux unshare ≥ 2.38 (`--map-user`), needed for the quota volume on non-root hosts. */
  mapUser: boolean;
  nprocFlag: '-u' | '-p' | null;
  systemLinks: SystemLink[];
  seccomp: { helper: string; filter: Buffer; denied: string[] };
};

function parseState(record: SessionRecord): BwrapState {
  const parsed = BwrapStateSchema.safeParse(record.backend_state);
  if (!parsed.success) throw new LbotError('box.validation', `session ${record.info.session_id} has a damaged bwrap record; remove it with lbot box rm`);
  return parsed.data;
}

/** A directory-safe, bounded form of a session id. */
function dirKey(sessionId: string): string {
  const body = sessionId.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 40);
  return `${body}_${randomBytes(4).toString('hex')}`;
}

export class BwrapBackend implements SandboxBackend {
  readonly name = 'bwrap' as const;
  readonly #opts: BwrapOptions;
  /** Root hosts: the unprivileged ids sandboxes run as; null when lbot is not root. */
  readonly #runAs: { uid: number; gid: number } | null;
  #caps: Promise<Capabilities | string> | undefined;

  constructor(opts: BwrapOptions) {
    this.#opts = opts;
    this.#runAs = sandboxRunAs(opts.sandboxUid, opts.sandboxGid);
  }

  /** Probes once per instance: binaries, a smoke sandbox, the limits mode, the quota volume. */
  #capabilities(): Promise<Capabilities | string> {
    this.#caps ??= this.#detect();
    return this.#caps;
  }

  async #detect(): Promise<Capabilities | string> {
    const bwrap = findExecutable(this.#opts.bin);
    if (!bwrap) return `bubblewrap (${this.#opts.bin}) is not installed; on Debian/Ubuntu: apt-get install -y bubblewrap`;
    const nsenter = findExecutable('nsenter');
    const setpriv = findExecutable('setpriv');
    const unshare = findExecutable('unshare');
    if (!nsenter || !setpriv) return 'nsenter and setpriv (util-linux) are required next to bubblewrap';
    const links = systemLinks();
    const smoke = [bwrap, '--unshare-all', '--die-with-parent', '--ro-bind', '/usr', '/usr'];
    for (const l of links) smoke.push(...(l.target !== null ? ['--symlink', l.target, l.path] : ['--ro-bind-try', l.path, l.path]));
    smoke.push('--proc', '/proc', '--dev', '/dev', '--', '/usr/bin/true');
    const run = await probeCommand(smoke, 5000);
    if (!run.ok) return `bubblewrap cannot create namespaces here (${run.detail || 'smoke test failed'}); unprivileged user namespaces may be disabled`;
    const seccomp = await this.#probeSeccomp();
    if (typeof seccomp === 'string') return seccomp;
    const limits = probeLimits(this.#opts.limits, cgroupHost(this.#opts.cgroupRoot));
    if (!limits.usable) return limits.reason;
    if (limits.warning) warnLimitsOnce(limits.warning, this.#opts.warn);
    let volume = false;
    let mapUser = false;
    if (unshare) {
      mapUser = (await probeCommand([unshare, '--help'], 5000)).output.includes('--map-user');
      const v = await probeCommand(
        [unshare, '--user', '--map-root-user', '--mount', '--propagation', 'private', '--', '/bin/sh', '-c', 'mount -t tmpfs -o size=1048576 lbot-probe /tmp'],
        5000,
      );
      volume = v.ok;
    }
    let nprocFlag: Capabilities['nprocFlag'] = null;
    if ((await probeCommand(['/bin/sh', '-c', 'ulimit -u 64'], 5000)).ok) nprocFlag = '-u';
    else if ((await probeCommand(['/bin/sh', '-c', 'ulimit -p 64'], 5000)).ok) nprocFlag = '-p';
    return {
      tools: { bwrap, nsenter, setpriv, unshare: unshare ?? 'unshare' },
      limits: limits.plan.mode,
      limitsPlan: limits.plan,
      limitsReason: limits.reason,
      volume,
      mapUser,
      nprocFlag,
      systemLinks: links,
      seccomp,
    };
  }

  /** The filter for this machine's architecture, checked by loading it once through the helper. */
  async #probeSeccomp(): Promise<Capabilities['seccomp'] | string> {
    const arch = seccompArchFor(process.arch);
    if (!arch) return `no seccomp filter for the ${process.arch} architecture; the bwrap backend supports x64 and arm64`;
    const helper = this.#opts.seccompHelper ?? DEFAULT_SECCOMP_HELPER;
    if (!existsSync(helper))
      return `the seccomp helper ${helper} is missing: it is compiled by npm run build (needs a C compiler: apt-get install -y gcc libc6-dev)`;
    const filter = buildSeccompFilter(arch);
    mkdirSync(this.#opts.baseDir, { recursive: true, mode: 0o700 });
    const probeFile = path.join(this.#opts.baseDir, `seccomp-probe-${process.pid}.bpf`);
    writeFileSync(probeFile, filter, { mode: 0o600 });
    try {
      // unshare -U must be refused by the filter: proves the helper loads it on this kernel.
      const r = await probeCommand([helper, probeFile, '/bin/sh', '-c', 'true && ! unshare -U true 2>/dev/null'], 5000);
      if (!r.ok) return `the seccomp filter could not be applied here (${r.detail || `exit ${r.code}`})`;
    } finally {
      rmSync(probeFile, { force: true });
    }
    return { helper, filter, denied: deniedSyscallNames(arch) };
  }

  async #ready(): Promise<Capabilities> {
    const caps = await this.#capabilities();
    if (typeof caps === 'string')
      throw new LbotError('box.unavailable', `the bwrap backend is unavailable: ${caps}`, { details: { reason: 'backend_missing' } });
    return caps;
  }

  async probe(): Promise<BackendProbe> {
    const caps = await this.#capabilities();
    if (typeof caps === 'string') return { available: false, reason: caps };
    const volume = caps.volume && caps.mapUser;
    const notes = [caps.limitsReason, volume ? 'quota: size-limited tmpfs' : 'quota: watchdog'];
    notes.push(`seccomp: ${caps.seccomp.denied.length} syscalls refused, no new namespaces (nested user namespaces off)`);
    if (this.#runAs) notes.push(`sandboxes run as uid ${this.#runAs.uid}:${this.#runAs.gid}, not root`);
    return { available: true, reason: notes.join('; '), limits_mode: caps.limits, seccomp: 'filter' };
  }

  // Over 100 lines because the steps of a session start are ordered and share the validated paths: pin
  // host mounts, make the session dirs, build the argv, spawn the holder, undo it all on failure.
  async startSession(spec: BoxSpec, ctx: StartContext): Promise<{ backend_session_id: string; state: Record<string, unknown> }> {
    const caps = await this.#ready();
    const key = dirKey(spec.session_id);
    // As root, the sandbox never runs as root: the holder and every exec drop to the sandbox uid first,
    // so files it may see are not its own and an escape lands as an unprivileged user. Either way the
    // sandbox keeps the uid it runs as (no nested user namespace bwrap would create, which nsenter
    // could not join); seccomp refuses every new namespace inside.
    const runAs = this.#runAs;
    const privileged = runAs !== null;
    const uid = runAs?.uid ?? process.getuid?.() ?? 1000;
    const gid = runAs?.gid ?? process.getgid?.() ?? 1000;
    // Host mounts are pinned: the inode each validated path names now is the one the sandbox must show.
    const hostPath = spec.host_path !== null && spec.host_path_mode !== 'none' ? { path: spec.host_path, mode: spec.host_path_mode } : null;
    const extraMounts = orderMounts(spec.extra_mounts);
    if (runAs) {
      if (hostPath) assertSandboxAccess(hostPath.path, hostPath.mode, runAs.uid, runAs.gid);
      for (const m of extraMounts) assertSandboxAccess(m.host_path, m.mode === 'rw' ? 'rw' : 'ro', runAs.uid, runAs.gid);
    }
    const pins = [...(hostPath ? [pinMount(hostPath.path, spec.mount_path)] : []), ...extraMounts.map((m) => pinMount(m.host_path, m.mount_path))];
    if (privileged) preparePrivateBase(this.#opts.baseDir);
    const dir = path.join(this.#opts.baseDir, key);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Again after the mkdir: another process may have removed the empty base in between.
    if (privileged) preparePrivateBase(this.#opts.baseDir);
    if (runAs) chmodSync(dir, 0o711);
    const own = (p: string) => {
      if (runAs) chownSync(p, runAs.uid, runAs.gid);
    };
    const passwdFile = path.join(dir, 'passwd');
    const groupFile = path.join(dir, 'group');
    writeJsonAtomic(path.join(dir, 'owner.json'), { session_id: spec.session_id });
    writeFileSync(
      passwdFile,
      `root:x:0:0:root:/root:/bin/sh\nlbot:x:${uid}:${gid}:lbot:/home:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
      { mode: 0o644 },
    );
    writeFileSync(groupFile, `root:x:0:\nlbot:x:${gid}:\nnogroup:x:65534:\n`, { mode: 0o644 });
    const filterFile = path.join(dir, 'seccomp.bpf');
    const helperFile = path.join(dir, 'seccomp-exec');
    writeFileSync(filterFile, caps.seccomp.filter, { mode: 0o644 });
    copyFileSync(caps.seccomp.helper, helperFile);
    chmodSync(helperFile, 0o755);
    const useVolume = spec.workspace_quota_mb > 0 && caps.volume && caps.mapUser;
    const workspaceDir = path.join(dir, 'workspace');
    const tmpDir = path.join(dir, 'tmp');
    const homeDir = path.join(dir, 'home');
    const volumeDir = path.join(dir, 'volume');
    if (useVolume) mkdirSync(volumeDir, { mode: 0o700 });
    else for (const d of [workspaceDir, tmpDir, homeDir]) mkdirSync(d, { mode: 0o755 });
    for (const d of useVolume ? [volumeDir] : [workspaceDir, tmpDir, homeDir]) own(d);

    const stage = new Stage(path.join(dir, 'stage'), runAs !== null);
    const plan = {
      hostPath: hostPath ? { ...hostPath, path: stage.add(hostPath.path, 'dir') } : null,
      extraMounts: extraMounts.map((m) => ({ ...m, host_path: stage.add(m.host_path, 'dir') })),
      stateDir: stage.add(ctx.sharedDir, 'dir'),
      nodeBinary: this.#opts.nodeBinary ? stage.add(this.#opts.nodeBinary, 'file') : null,
    };
    if (runAs) chmodSync(ctx.sharedDir, 0o755);

    const cgroups = createSessionCgroup(caps.limitsPlan, key, spec);
    const seccompFd = openSync(filterFile, 'r');
    const argv = buildHolderArgv(
      {
        bwrap: caps.tools.bwrap,
        ids: null,
        dev: 'minimal',
        network: spec.network,
        readOnlyRoot: spec.read_only_rootfs,
        disableUserns: false,
        systemLinks: caps.systemLinks,
        tmpDir,
        homeDir,
        workspaceDir,
        mountPath: spec.mount_path,
        ...plan,
        passwdFile,
        groupFile,
        seccomp: { fd: HOLDER_SECCOMP_FD, filterFile, helperFile },
        stage: runAs ? { ...runAs, binds: stage.binds } : null,
        keeper: {
          ttlSec: spec.persistent ? 0 : ctx.ttlSec,
          intervalSec: ctx.ttlSec > 0 ? Math.max(1, Math.min(KEEPER_INTERVAL_SEC, Math.floor(ctx.ttlSec / 2))) : KEEPER_INTERVAL_SEC,
        },
        volume: useVolume ? { volumeDir, sizeBytes: quotaFilesystemBytes(spec.workspace_quota_mb) } : null,
        volumeHop: useVolume ? { uid, gid } : null,
      },
      caps.tools.unshare,
      caps.tools.setpriv,
    );
    let started: { holder: ProcessIdentity; ns: ProcessIdentity } | null = null;
    try {
      started = await this.#spawnHolder(argv, dir, seccompFd);
      verifyPins(started.ns.pid, pins);
      joinCgroup(cgroups, started.ns.pid);
      const state: BwrapState = {
        dir,
        holder: started.holder,
        ns: started.ns,
        cgroups,
        limits_mode: caps.limits,
        volume: useVolume,
        workspace_dir: workspaceDir,
        tmp_dir: tmpDir,
        home_dir: homeDir,
        run_as: runAs,
      };
      writeJsonAtomic(path.join(dir, 'holder.json'), state);
      return { backend_session_id: dir, state };
    } catch (err) {
      if (started) await this.#stopDir({ dir, holder: started.holder, ns: started.ns, cgroups });
      await removeSessionCgroup(cgroups);
      rmSync(dir, { recursive: true, force: true });
      throw err;
    } finally {
      closeSync(seccompFd);
    }
  }

  /** Starts the holder detached and reads bwrap's info JSON for the pid owning the namespaces. */
  #spawnHolder(argv: string[], dir: string, seccompFd: number): Promise<{ holder: ProcessIdentity; ns: ProcessIdentity }> {
    return new Promise((resolve, reject) => {
      const logFd = openSync(path.join(dir, 'holder.log'), 'a', 0o600);
      const [cmd, ...args] = argv;
      const child = spawn(cmd ?? 'bwrap', args, { detached: true, stdio: ['ignore', 'ignore', logFd, 'pipe', 'pipe', seccompFd], env: { ...HELPER_ENV } });
      closeSync(logFd);
      let text = '';
      let done = false;
      let nsPidFromInfo: number | null = null;
      let ready = false;
      const info = child.stdio[3];
      const readyPipe = child.stdio[4];
      const fail = (why: string) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (child.pid) signalPid(-child.pid, 'SIGKILL');
        let log = '';
        try {
          log = readFileSync(path.join(dir, 'holder.log'), 'utf8').trim().slice(-300);
        } catch {
          // no log
        }
        reject(
          new LbotError('box.unavailable', `the bwrap session holder did not start: ${why}${log ? `: ${log}` : ''}`, {
            details: { reason: 'backend_missing' },
          }),
        );
      };
      const timer = setTimeout(() => fail(`no namespace info within ${HOLDER_START_TIMEOUT_MS} ms`), HOLDER_START_TIMEOUT_MS);
      child.on('error', (err) => fail(err.message));
      child.on('exit', (code) => fail(`it exited with code ${code}`));
      // bwrap writes the info in several pieces and closes the fd when done; reading to EOF avoids
      // killing the holder with SIGPIPE by closing our end early.
      info?.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
      });
      // The namespaces exist once bwrap closes the info fd; the mounts are done once the keeper says ready.
      const settle = () => {
        if (done || nsPidFromInfo === null || !ready) return;
        const ns = identityOf(nsPidFromInfo);
        const holder = child.pid ? identityOf(child.pid) : null;
        if (!ns || !holder) return fail('the sandbox exited right after starting');
        done = true;
        clearTimeout(timer);
        child.removeAllListeners('exit');
        info?.destroy();
        readyPipe?.destroy();
        child.unref();
        resolve({ holder, ns });
      };
      info?.on('end', () => {
        const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
        if (!m) return fail('bwrap reported no child pid');
        nsPidFromInfo = Number(m[1]);
        settle();
      });
      info?.on('error', () => undefined);
      let readyText = '';
      readyPipe?.on('data', (chunk: Buffer) => {
        readyText += chunk.toString('utf8');
        if (readyText.includes('ready')) {
          ready = true;
          settle();
        }
      });
      readyPipe?.on('error', () => undefined);
    });
  }

  /**
   * The rlimits of an exec (`exec` null: a managed process). In rlimit mode one-shot commands and managed
   * processes get RLIMIT_DATA (memory_mb) — never RLIMIT_AS, which kills JIT runtimes such as a Node MCP
   * server for the address space they reserve — and one-shot commands RLIMIT_CPU (timeout + 5 s) and
   * RLIMIT_NPROC; lbot's own helpers (`internal`) only the limits of every mode.
   */
  #shellLimits(caps: Capabilities, record: SessionRecord, exec: { oneShot: boolean; timeoutMs: number } | null): ShellLimits {
    const limits: ShellLimits = { fileBytes: fileSizeLimitBytes(record.info.workspace_quota_mb), openFiles: OPEN_FILES };
    if (caps.limits === 'rlimit') {
      if (!exec || exec.oneShot) limits.dataMb = record.info.memory_mb;
      if (exec?.oneShot) limits.cpuSeconds = Math.ceil(exec.timeoutMs / 1000) + CPU_GRACE_SEC;
      if (exec && caps.nprocFlag) limits.processes = { count: record.info.pids_limit, flag: caps.nprocFlag };
    }
    return limits;
  }

  async exec(record: SessionRecord, req: ExecRequest): Promise<RunOutcome> {
    const caps = await this.#ready();
    const state = parseState(record);
    const gate = state.cgroups.length > 0;
    const script = buildExecScript({
      workdir: req.workdir,
      cmd: req.cmd,
      limits: this.#shellLimits(caps, record, { oneShot: !req.internal, timeoutMs: req.timeoutMs }),
      gate,
      env: req.env,
    });
    return runProcess({
      argv: buildEnterArgv(caps.tools, state.ns.pid, script, { runAs: state.run_as, network: record.info.network }),
      env: { ...HELPER_ENV },
      ...execRunOptions(req),
      ...(gate ? { gate: (pid: number) => joinCgroup(state.cgroups, pid) } : {}),
    });
  }

  async processLaunch(record: SessionRecord, spec: ManagedProcessSpec): Promise<ProcessLaunch> {
    const caps = await this.#ready();
    const state = parseState(record);
    const gate = state.cgroups.length > 0;
    const limits = this.#shellLimits(caps, record, null);
    const script = buildExecScript({ workdir: spec.cwd, cmd: argvToCommand([spec.command, ...spec.args]), limits, gate, env: spec.env });
    return {
      argv: buildEnterArgv(caps.tools, state.ns.pid, script, { runAs: state.run_as, network: record.info.network }),
      env: { ...HELPER_ENV },
      cgroups: state.cgroups,
      gate,
    };
  }

  async isSessionAlive(record: SessionRecord): Promise<boolean> {
    const state = BwrapStateSchema.safeParse(record.backend_state);
    return state.success && isIdentityAlive(state.data.ns) && isIdentityAlive(state.data.holder);
  }

  async stopSession(record: SessionRecord): Promise<void> {
    const state = BwrapStateSchema.safeParse(record.backend_state);
    if (!state.success) return;
    await this.#stopDir(state.data);
  }

  async #stopDir(state: Pick<BwrapState, 'dir' | 'holder' | 'ns' | 'cgroups'>): Promise<void> {
    // Killing the PID namespace's init takes every process of the session with it; the outer bwrap then
    // reaps it and exits by itself (killing both at once would leave the inner one a zombie).
    if (isIdentityAlive(state.ns)) signalPid(state.ns.pid, 'SIGKILL');
    for (let i = 0; i < 50 && isIdentityAlive(state.holder); i++) await new Promise((r) => setTimeout(r, 20));
    if (isIdentityAlive(state.holder)) signalPid(state.holder.pid, 'SIGKILL');
    for (let i = 0; i < 100 && (isIdentityAlive(state.ns) || isIdentityAlive(state.holder)); i++) await new Promise((r) => setTimeout(r, 20));
    await removeSessionCgroup(state.cgroups);
    rmSync(state.dir, { recursive: true, force: true });
    try {
      // The per-data-dir base goes with its last session (root hosts keep it under the temp dir).
      rmdirSync(path.dirname(state.dir));
    } catch {
      // other sessions still live there
    }
  }

  async usage(record: SessionRecord): Promise<number> {
    const state = parseState(record);
    const dirs: string[] = [];
    let used = 0;
    if (state.volume) {
      if (!isIdentityAlive(state.ns)) return 0;
      const st = await statfs(`/proc/${state.ns.pid}/root/tmp`);
      used += (st.blocks - st.bfree) * st.bsize;
    } else dirs.push(state.tmp_dir, state.home_dir);
    if (record.info.host_path !== null && record.info.host_path_mode !== 'none') dirs.push(record.info.host_path);
    else if (!state.volume) dirs.push(state.workspace_dir);
    return used + (await measureUsage(dirs));
  }

  /** The same measurement as `usage` for the quota watcher; stopping means killing the PID namespace's init. */
  quotaWatch(record: SessionRecord): QuotaWatchPlan {
    const state = parseState(record);
    const dirs = state.volume ? [] : [state.tmp_dir, state.home_dir];
    if (record.info.host_path !== null && record.info.host_path_mode !== 'none') dirs.push(record.info.host_path);
    else if (!state.volume) dirs.push(state.workspace_dir);
    return { dirs, statfs: state.volume ? [`/proc/${state.ns.pid}/root/tmp`] : [], stop: { kind: 'pidns', init: state.ns } };
  }

  async cleanupOrphans(known: ReadonlySet<string>): Promise<void> {
    sweepStaleCgroups(10 * 60_000, cgroupHost(this.#opts.cgroupRoot));
    let entries: string[];
    try {
      entries = readdirSync(this.#opts.baseDir);
    } catch {
      return;
    }
    for (const name of entries) {
      const dir = path.join(this.#opts.baseDir, name);
      if (known.has(dir)) continue;
      // A session being created right now has its dir before its record; leave young ones alone.
      let age = 0;
      try {
        age = Date.now() - statSync(dir).mtimeMs;
      } catch {
        continue;
      }
      const state = readJson(path.join(dir, 'holder.json'), BwrapStateSchema);
      if (state && (age > 60_000 || !isIdentityAlive(state.ns))) await this.#stopDir(state);
      else if (!state && existsSync(dir) && age > 60_000) rmSync(dir, { recursive: true, force: true });
    }
  }
}
