// The bwrap backend: a detached holder per session owns its namespaces; every exec enters them with nsenter.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { LbotError } from '../../core/errors.js';
import { fileSizeLimitBytes, measureUsage, quotaFilesystemBytes } from '../../core/box/quota.js';
import { argvToCommand } from '../../core/box/shell.js';
import type { BoxSpec, ManagedProcessSpec } from '../../core/box/model.js';
import { writeJsonAtomic, readJson } from './files.js';
import { identityOf, isIdentityAlive, signal, type ProcessIdentity } from './proc.js';
import { createSessionCgroup, joinCgroup, probeLimits, removeSessionCgroup, sweepStaleCgroups, type LimitsMode, type LimitsPreference } from './limits.js';
import { runProcess, type RunOutcome } from './run-process.js';
import { findExecutable, probeCommand } from './host-tools.js';
import {
  SANDBOX_PATH,
  buildEnterArgv,
  buildExecScript,
  buildHolderArgv,
  type HostTools,
  type ShellLimits,
  type SystemLink,
} from './bwrap-args.js';
import { execRunOptions, type BackendProbe, type ExecRequest, type ProcessLaunch, type SandboxBackend, type SessionRecord, type StartContext } from './backend.js';

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
});
type BwrapState = z.infer<typeof BwrapStateSchema>;

const OPEN_FILES = 256;
const HOLDER_START_TIMEOUT_MS = 10_000;

export type BwrapOptions = {
  bin: string;
  baseDir: string;
  limits: LimitsPreference;
  /** lbot's node binary, bound into sandboxes for the file tools' helper. */
  nodeBinary: string | null;
};

type Capabilities = {
  tools: HostTools & { bwrap: string };
  disableUserns: boolean;
  limits: LimitsMode;
  limitsReason: string;
  volume: boolean;
  /** util-linux unshare ≥ 2.38 (`--map-user`), needed for the quota volume on non-root hosts. */
  mapUser: boolean;
  nprocFlag: '-u' | '-p' | null;
  systemLinks: SystemLink[];
};

function systemLinks(): SystemLink[] {
  const out: SystemLink[] = [];
  for (const p of ['/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32']) {
    try {
      const st = lstatSync(p);
      out.push({ path: p, target: st.isSymbolicLink() ? readlinkSync(p) : null });
    } catch {
      // not present on this distribution
    }
  }
  return out;
}

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
  #caps: Promise<Capabilities | string> | undefined;

  constructor(opts: BwrapOptions) {
    this.#opts = opts;
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
    const help = await probeCommand([bwrap, '--help'], 5000);
    const disableUserns = help.output.includes('--disable-userns');
    const limits = probeLimits(this.#opts.limits);
    let volume = false;
    let mapUser = false;
    if (unshare) {
      mapUser = (await probeCommand([unshare, '--help'], 5000)).output.includes('--map-user');
      const v = await probeCommand([unshare, '--user', '--map-root-user', '--mount', '--propagation', 'private', '--', '/bin/sh', '-c', 'mount -t tmpfs -o size=1048576 lbot-probe /tmp'], 5000);
      volume = v.ok;
    }
    let nprocFlag: Capabilities['nprocFlag'] = null;
    if ((await probeCommand(['/bin/sh', '-c', 'ulimit -u 64'], 5000)).ok) nprocFlag = '-u';
    else if ((await probeCommand(['/bin/sh', '-c', 'ulimit -p 64'], 5000)).ok) nprocFlag = '-p';
    return { tools: { bwrap, nsenter, setpriv, unshare: unshare ?? 'unshare' }, disableUserns, limits: limits.mode, limitsReason: limits.reason, volume, mapUser, nprocFlag, systemLinks: links };
  }

  async #ready(): Promise<Capabilities> {
    const caps = await this.#capabilities();
    if (typeof caps === 'string') throw new LbotError('box.unavailable', `the bwrap backend is unavailable: ${caps}`, { details: { reason: 'backend_missing' } });
    return caps;
  }

  async probe(): Promise<BackendProbe> {
    const caps = await this.#capabilities();
    if (typeof caps === 'string') return { available: false, reason: caps };
    const volume = caps.volume && (process.getuid?.() === 0 || caps.mapUser);
    const notes = [caps.limitsReason, volume ? 'quota: size-limited tmpfs' : 'quota: watchdog'];
    if (!caps.disableUserns || process.getuid?.() !== 0) notes.push('nested user namespaces are not disabled (needs bwrap ≥ 0.8 and lbot running as root)');
    return { available: true, reason: notes.join('; '), limits_mode: caps.limits };
  }

  async startSession(spec: BoxSpec, ctx: StartContext): Promise<{ backend_session_id: string; state: Record<string, unknown> }> {
    const caps = await this.#ready();
    const key = dirKey(spec.session_id);
    const dir = path.join(this.#opts.baseDir, key);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const hostUid = process.getuid?.() ?? 1000;
    const hostGid = process.getgid?.() ?? 1000;
    const root = hostUid === 0;
    // Root maps the sandbox user to 1000 and can enter nested namespaces; other users keep their own uid and
    // avoid every nested user namespace bwrap would create, because nsenter could not join its siblings.
    const uid = root ? 1000 : hostUid;
    const gid = root ? 1000 : hostGid;
    const passwdFile = path.join(dir, 'passwd');
    const groupFile = path.join(dir, 'group');
    writeJsonAtomic(path.join(dir, 'owner.json'), { session_id: spec.session_id });
    writeFileSync(passwdFile, `root:x:0:0:root:/root:/bin/sh\nlbot:x:${uid}:${gid}:lbot:/home:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`);
    writeFileSync(groupFile, `root:x:0:\nlbot:x:${gid}:\nnogroup:x:65534:\n`);
    const useVolume = spec.workspace_quota_mb > 0 && caps.volume && (root || caps.mapUser);
    const workspaceDir = path.join(dir, 'workspace');
    const tmpDir = path.join(dir, 'tmp');
    const homeDir = path.join(dir, 'home');
    const volumeDir = path.join(dir, 'volume');
    if (useVolume) mkdirSync(volumeDir, { mode: 0o700 });
    else for (const d of [workspaceDir, tmpDir, homeDir]) mkdirSync(d, { mode: 0o755 });

    const cgroups = caps.limits === 'rlimit' ? [] : createSessionCgroup(caps.limits, key, spec);
    const argv = buildHolderArgv(
      {
        bwrap: caps.tools.bwrap,
        ids: root ? { uid, gid } : null,
        dev: root ? 'dev' : 'minimal',
        network: spec.network,
        readOnlyRoot: spec.read_only_rootfs,
        // --disable-userns nests the sandbox in a second user namespace; only root can then enter the
        // session's other namespaces with nsenter (they belong to the outer one), so others go without it.
        disableUserns: caps.disableUserns && root,
        systemLinks: caps.systemLinks,
        tmpDir,
        homeDir,
        workspaceDir,
        mountPath: spec.mount_path,
        hostPath: spec.host_path !== null && spec.host_path_mode !== 'none' ? { path: spec.host_path, mode: spec.host_path_mode } : null,
        extraMounts: spec.extra_mounts,
        stateDir: ctx.sharedDir,
        passwdFile,
        groupFile,
        nodeBinary: this.#opts.nodeBinary,
        keeper: { ttlSec: spec.persistent ? 0 : ctx.ttlSec, intervalSec: ctx.ttlSec > 0 ? Math.max(1, Math.min(30, Math.floor(ctx.ttlSec / 2))) : 3600 },
        volume: useVolume ? { volumeDir, sizeBytes: quotaFilesystemBytes(spec.workspace_quota_mb) } : null,
        volumeHop: useVolume && !root ? { uid, gid } : null,
      },
      caps.tools.unshare,
    );
    try {
      const { holder, ns } = await this.#spawnHolder(argv, dir);
      joinCgroup(cgroups, ns.pid);
      const state: BwrapState = { dir, holder, ns, cgroups, limits_mode: caps.limits, volume: useVolume, workspace_dir: workspaceDir, tmp_dir: tmpDir, home_dir: homeDir };
      writeJsonAtomic(path.join(dir, 'holder.json'), state);
      return { backend_session_id: dir, state };
    } catch (err) {
      await removeSessionCgroup(cgroups);
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** Starts the holder detached and reads bwrap's info JSON for the pid owning the namespaces. */
  #spawnHolder(argv: string[], dir: string): Promise<{ holder: ProcessIdentity; ns: ProcessIdentity }> {
    return new Promise((resolve, reject) => {
      const logFd = openSync(path.join(dir, 'holder.log'), 'a', 0o600);
      const [cmd, ...args] = argv;
      const child = spawn(cmd ?? 'bwrap', args, { detached: true, stdio: ['ignore', 'ignore', logFd, 'pipe', 'pipe'], env: { PATH: SANDBOX_PATH } });
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
        if (child.pid) signal(-child.pid, 'SIGKILL');
        let log = '';
        try {
          log = readFileSync(path.join(dir, 'holder.log'), 'utf8').trim().slice(-300);
        } catch {
          // no log
        }
        reject(new LbotError('box.unavailable', `the bwrap session holder did not start: ${why}${log ? `: ${log}` : ''}`, { details: { reason: 'backend_missing' } }));
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

  #shellLimits(caps: Capabilities, record: SessionRecord, oneShot: boolean): ShellLimits {
    const limits: ShellLimits = { fileBytes: fileSizeLimitBytes(record.info.workspace_quota_mb), openFiles: OPEN_FILES };
    if (caps.limits === 'rlimit') {
      if (oneShot) limits.addressSpaceMb = record.info.memory_mb;
      if (caps.nprocFlag) limits.processes = { count: record.info.pids_limit, flag: caps.nprocFlag };
    }
    return limits;
  }

  #env(extra: Record<string, string>): Record<string, string> {
    return { PATH: SANDBOX_PATH, HOME: '/home', PYTHONUNBUFFERED: '1', LANG: 'C.UTF-8', ...extra };
  }

  async exec(record: SessionRecord, req: ExecRequest): Promise<RunOutcome> {
    const caps = await this.#ready();
    const state = parseState(record);
    const gate = state.cgroups.length > 0;
    const script = buildExecScript({ workdir: req.workdir, cmd: req.cmd, limits: this.#shellLimits(caps, record, !req.internal), gate });
    return runProcess({
      argv: buildEnterArgv(caps.tools, state.ns.pid, script),
      env: this.#env(req.env),
      ...execRunOptions(req),
      ...(gate ? { gate: (pid: number) => joinCgroup(state.cgroups, pid) } : {}),
    });
  }

  async processLaunch(record: SessionRecord, spec: ManagedProcessSpec): Promise<ProcessLaunch> {
    const caps = await this.#ready();
    const state = parseState(record);
    const gate = state.cgroups.length > 0;
    const limits: ShellLimits = { fileBytes: fileSizeLimitBytes(record.info.workspace_quota_mb), openFiles: OPEN_FILES };
    const script = buildExecScript({ workdir: spec.cwd, cmd: argvToCommand([spec.command, ...spec.args]), limits, gate });
    return { argv: buildEnterArgv(caps.tools, state.ns.pid, script), env: this.#env(spec.env), cgroups: state.cgroups, gate };
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
    if (isIdentityAlive(state.ns)) signal(state.ns.pid, 'SIGKILL');
    for (let i = 0; i < 50 && isIdentityAlive(state.holder); i++) await new Promise((r) => setTimeout(r, 20));
    if (isIdentityAlive(state.holder)) signal(state.holder.pid, 'SIGKILL');
    for (let i = 0; i < 100 && (isIdentityAlive(state.ns) || isIdentityAlive(state.holder)); i++) await new Promise((r) => setTimeout(r, 20));
    await removeSessionCgroup(state.cgroups);
    rmSync(state.dir, { recursive: true, force: true });
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

  async cleanupOrphans(known: ReadonlySet<string>): Promise<void> {
    sweepStaleCgroups(10 * 60_000);
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
