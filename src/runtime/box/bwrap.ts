// The bwrap backend: a detached holder per session owns its namespaces; its exec agent runs every exec from
// inside (execs enter with nsenter when a session has no agent), managed processes enter with nsenter.
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { statfs } from 'node:fs/promises';
import path from 'node:path';
import { LbotError } from '../../core/errors.js';
import { fileSizeLimitBytes, measureUsage, quotaFilesystemBytes } from '../../core/box/quota.js';
import { argvToCommand } from '../../core/box/shell.js';
import { sandboxRunAs } from './hardening.js';
import { Stage, assertSandboxAccess, pinMount, preparePrivateBase, verifyPins } from './bwrap-mounts.js';
import type { BoxSpec, ManagedProcessSpec } from '../../core/box/model.js';
import { writeJsonAtomic, readJson } from './files.js';
import { isIdentityAlive, type ProcessIdentity } from '../process/identity.js';
import { signalPid } from '../process/group.js';
import { cgroupHost, createSessionCgroup, joinCgroup, removeSessionCgroup, sweepStaleCgroups } from './limits.js';
import { runProcess, type RunOutcome } from './run-process.js';
import { HELPER_ENV, buildEnterArgv, buildExecScript, buildHolderArgv, orderMounts, type ShellLimits } from './bwrap-args.js';
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
import { detectBwrap, type BwrapProbeOptions, type Capabilities } from './bwrap-capabilities.js';
import { spawnHolder } from './bwrap-holder.js';
import { AgentUnreachable, runViaAgent } from './exec-agent-client.js';
import { BwrapStateSchema, dirKey, parseState, type BwrapState } from './bwrap-state.js';

const OPEN_FILES = 256;
/** RLIMIT_CPU of a one-shot exec in rlimit mode: its timeout plus this many seconds. */
const CPU_GRACE_SEC = 5;
/** The holder's stdio slot that carries the seccomp filter to `bwrap --seccomp`. */
const HOLDER_SECCOMP_FD = 5;
/** How often a holder's keeper checks its TTL and whether its state dir still exists. */
const KEEPER_INTERVAL_SEC = 5;
/** The sandbox's fd that carries the exec agent's listening socket. */
const AGENT_FD = 6;

export type BwrapOptions = BwrapProbeOptions & {
  /** lbot's node binary, bound into sandboxes for the file tools' helper. */
  nodeBinary: string | null;
  /** Root hosts: the unprivileged uid/gid sandboxes run as (box.bwrap.sandbox_uid / sandbox_gid). */
  sandboxUid?: number;
  sandboxGid?: number;
  /** Run execs through the in-session exec agent when it is built (default true; box.bwrap.exec_agent). */
  execAgent?: boolean;
};

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
    this.#caps ??= detectBwrap(this.#opts);
    return this.#caps;
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
    const agentHost = this.#opts.execAgent === false ? null : caps.agent;
    const agentFile = path.join(dir, 'exec-agent');
    if (agentHost) {
      copyFileSync(agentHost, agentFile);
      chmodSync(agentFile, 0o755);
    }
    // In the session's own dir, which is never mounted into the sandbox; the socket itself is 0600.
    const agentSocket = path.join(dir, 'agent.sock');
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
        stage: runAs ? { ...runAs, dir: stage.dir, binds: stage.binds } : null,
        keeper: {
          ttlSec: spec.persistent ? 0 : ctx.ttlSec,
          intervalSec: ctx.ttlSec > 0 ? Math.max(1, Math.min(KEEPER_INTERVAL_SEC, Math.floor(ctx.ttlSec / 2))) : KEEPER_INTERVAL_SEC,
        },
        volume: useVolume ? { volumeDir, sizeBytes: quotaFilesystemBytes(spec.workspace_quota_mb) } : null,
        volumeHop: useVolume ? { uid, gid } : null,
        agent: agentHost ? { host: agentHost, helperFile: agentFile, socket: agentSocket, fd: AGENT_FD } : null,
      },
      caps.tools.unshare,
      caps.tools.setpriv,
    );
    let started: { holder: ProcessIdentity; ns: ProcessIdentity } | null = null;
    try {
      started = await spawnHolder(argv, dir, seccompFd);
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
        agent_socket: agentHost ? agentSocket : null,
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
    const limits = this.#shellLimits(caps, record, { oneShot: !req.internal, timeoutMs: req.timeoutMs });
    if (state.agent_socket !== null && this.#opts.execAgent !== false) {
      // The agent already is where every guarantee holds (namespaces, cgroup, no-new-privs, seccomp):
      // its command needs no gate; the script sets the rlimits, exports the env and enters the workdir.
      const script = buildExecScript({ workdir: req.workdir, cmd: req.cmd, limits, gate: false, env: req.env });
      try {
        return await runViaAgent(state.agent_socket, { argv: ['/bin/sh', '-c', script, 'sh'], env: { ...HELPER_ENV }, ...execRunOptions(req) });
      } catch (err) {
        if (!(err instanceof AgentUnreachable)) throw err;
        // Nothing ran: enter the namespaces instead.
      }
    }
    const gate = state.cgroups.length > 0;
    const script = buildExecScript({ workdir: req.workdir, cmd: req.cmd, limits, gate, env: req.env });
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
