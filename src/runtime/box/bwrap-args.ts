// Argument building for the bwrap backend: the holder that owns a session's namespaces, and each exec.
import type { MountSpec, NetworkMode } from '../../core/box/model.js';
import { shQuote } from '../../core/box/shell.js';
import { dropPrivilegeArgs, procDevArgs, stageArgv, systemBindArgs, type SystemLink } from './hardening.js';

export type { SystemLink } from './hardening.js';

export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
export const SANDBOX_HOSTNAME = 'lbot-box';
/** Inside the sandbox: the session's shared state (last-use marker, busy markers) and lbot's node binary. */
export const STATE_MOUNT = '/.lbot/state';
export const NODE_MOUNT = '/.lbot/node';
/** Inside the sandbox: the seccomp filter and the helper that loads it before every exec. */
export const SECCOMP_FILTER_MOUNT = '/.lbot/seccomp.bpf';
export const SECCOMP_EXEC_MOUNT = '/.lbot/seccomp-exec';
/** Inside the sandbox: the exec agent, the sandbox's PID 1. */
export const EXEC_AGENT_MOUNT = '/.lbot/exec-agent';

export type HolderPlan = {
  bwrap: string;
  /** `--uid/--gid` for bwrap (root hosts: 1000); null keeps the invoking uid, which avoids a nested user namespace. */
  ids: { uid: number; gid: number } | null;
  /** `dev`: bwrap's own /dev (with devpts); `minimal`: device binds only, for hosts where devpts would nest namespaces. */
  dev: 'dev' | 'minimal';
  network: NetworkMode;
  readOnlyRoot: boolean;
  /** bwrap ≥ 0.8: forbid nested user namespaces. */
  disableUserns: boolean;
  systemLinks: readonly SystemLink[];
  /** Host dirs for /tmp and /home, and for the primary mount when no host path is given. */
  tmpDir: string;
  homeDir: string;
  workspaceDir: string;
  mountPath: string;
  /** A host directory to mount at mountPath instead of workspaceDir. */
  hostPath: { path: string; mode: 'ro' | 'rw' } | null;
  extraMounts: readonly MountSpec[];
  stateDir: string;
  passwdFile: string;
  groupFile: string;
  nodeBinary: string | null;
  /** The filter (bound for execs, and loaded by bwrap from `fd` for the holder) and its exec helper. */
  seccomp: { fd: number; filterFile: string; helperFile: string };
  /**
   * Root hosts: bind these host sources onto stage paths in a private mount namespace as root, then
   * drop to `uid`/`gid` before anything else runs; the plan's sources already name the stage paths.
   */
  stage: { uid: number; gid: number; dir: string; binds: readonly { source: string; target: string }[] } | null;
  keeper: { ttlSec: number; intervalSec: number };
  /**
   * Size-limited filesystem for tmp, home and the workspace: the holder starts in its own user and
   * mount namespace, mounts a tmpfs of `sizeBytes` at `volumeDir` and creates the three dirs in it.
   */
  volume: { volumeDir: string; sizeBytes: number } | null;
  /**
   * With a volume on a non-root host: after mounting it as root of a first user namespace, enter a second
   * one mapping this uid, so bwrap runs as that uid and needs no nested namespace of its own.
   */
  volumeHop: { uid: number; gid: number } | null;
  /**
   * The exec agent: `host` (its binary on the host) binds `socket` and hands it to the sandbox on `fd`,
   * where `helperFile` runs as PID 1 and starts the keeper. Null: the keeper is the sandbox's command.
   */
  agent: { host: string; helperFile: string; socket: string; fd: number } | null;
};

/** The idle keeper: sleeps, and exits (ending the session) once the session is idle past its TTL. */
export const KEEPER_SCRIPT = [
  // Tell the starter the sandbox is fully set up (mounts done), then let go of the pipe.
  'echo ready >&4; exec 4>&-',
  'ttl=$1; iv=$2',
  // bwrap's init waits for every process of the namespace: ending the session means ending them all.
  'end() { kill -9 -1 2>/dev/null; exit 0; }',
  'while :; do',
  '  sleep "$iv"',
  // The session's state dir was deleted (its data dir removed): nobody can reach this session any more.
  `  [ "$(stat -c %h ${STATE_MOUNT} 2>/dev/null || echo 0)" = 0 ] && end`,
  '  [ "$ttl" -gt 0 ] || continue',
  `  for f in ${STATE_MOUNT}/busy-*; do [ -e "$f" ] && continue 2; done`,
  `  last=$(stat -c %Y ${STATE_MOUNT}/last_used 2>/dev/null) || continue`,
  '  now=$(date +%s)',
  '  [ $((now - last)) -gt "$ttl" ] && end',
  'done',
].join('\n');

function depth(p: string): number {
  return p.split('/').filter(Boolean).length;
}

/** Extra mounts in the order bwrap must apply them: parents before children. */
export function orderMounts(mounts: readonly MountSpec[]): MountSpec[] {
  return mounts.filter((m) => m.mode !== 'none').sort((a, b) => depth(a.mount_path) - depth(b.mount_path) || a.mount_path.localeCompare(b.mount_path));
}

/** The bwrap argv of a session holder (box.md §6.6), optionally wrapped to mount the quota volume. */
export function buildHolderArgv(plan: HolderPlan, unshare = 'unshare', setpriv = 'setpriv'): string[] {
  const vol = plan.volume;
  const tmp = vol ? `${vol.volumeDir}/tmp` : plan.tmpDir;
  const home = vol ? `${vol.volumeDir}/home` : plan.homeDir;
  const workspace = vol ? `${vol.volumeDir}/workspace` : plan.workspaceDir;
  const a: string[] = [plan.bwrap, '--new-session', '--unshare-user'];
  if (plan.ids) a.push('--uid', String(plan.ids.uid), '--gid', String(plan.ids.gid));
  a.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  if (plan.network === 'off') a.push('--unshare-net');
  if (plan.disableUserns) a.push('--disable-userns');
  a.push('--hostname', SANDBOX_HOSTNAME, '--clearenv');
  a.push('--setenv', 'PATH', SANDBOX_PATH, '--setenv', 'HOME', '/home', '--setenv', 'PYTHONUNBUFFERED', '1', '--setenv', 'LANG', 'C.UTF-8');
  a.push(...systemBindArgs(plan.systemLinks, plan.network === 'on'));
  a.push('--ro-bind', plan.passwdFile, '/etc/passwd', '--ro-bind', plan.groupFile, '/etc/group');
  a.push(...procDevArgs(plan.dev));
  a.push('--bind', tmp, '/tmp', '--bind', home, '/home');
  if (plan.hostPath) a.push(plan.hostPath.mode === 'ro' ? '--ro-bind' : '--bind', plan.hostPath.path, plan.mountPath);
  else a.push('--bind', workspace, plan.mountPath);
  for (const m of orderMounts(plan.extraMounts)) a.push(m.mode === 'ro' ? '--ro-bind' : '--bind', m.host_path, m.mount_path);
  a.push('--ro-bind', plan.stateDir, STATE_MOUNT);
  if (plan.nodeBinary) a.push('--ro-bind', plan.nodeBinary, NODE_MOUNT);
  a.push('--ro-bind', plan.seccomp.filterFile, SECCOMP_FILTER_MOUNT, '--ro-bind', plan.seccomp.helperFile, SECCOMP_EXEC_MOUNT);
  if (plan.agent) a.push('--ro-bind', plan.agent.helperFile, EXEC_AGENT_MOUNT, '--as-pid-1');
  if (plan.readOnlyRoot) a.push('--remount-ro', '/');
  a.push('--seccomp', String(plan.seccomp.fd));
  a.push('--chdir', '/', '--info-fd', '3', '--');
  if (plan.agent) a.push(EXEC_AGENT_MOUNT, 'serve', String(plan.agent.fd), '--');
  a.push('/bin/sh', '-c', KEEPER_SCRIPT, 'lbot-keeper', String(plan.keeper.ttlSec), String(plan.keeper.intervalSec));
  let argv = a;
  if (vol) {
    // The wrapper owns a user+mount namespace just for the volume; bwrap nests its own namespaces inside.
    const hop = plan.volumeHop ? `exec ${unshare} --user --map-user=${plan.volumeHop.uid} --map-group=${plan.volumeHop.gid} -- "$@"` : 'exec "$@"';
    const setup = [`mount -t tmpfs -o size=${vol.sizeBytes},mode=0755 lbot-volume "$1"`, 'mkdir -p "$1/workspace" "$1/tmp" "$1/home"', 'shift', hop].join(
      ' && ',
    );
    argv = [unshare, '--user', '--map-root-user', '--mount', '--propagation', 'private', '--', '/bin/sh', '-c', setup, 'lbot-volume', vol.volumeDir, ...a];
  }
  const staged = plan.stage ? stageArgv(plan.stage, argv, unshare, setpriv) : argv;
  // Outermost, on the host: the agent's socket exists (and queues connections) before the sandbox does.
  return plan.agent ? [plan.agent.host, 'listen', plan.agent.socket, String(plan.agent.fd), '--', ...staged] : staged;
}

export type ShellLimits = {
  /** RLIMIT_FSIZE in bytes. */
  fileBytes: number;
  openFiles: number;
  /**
   * RLIMIT_DATA in MiB (rlimit mode): the private writable memory of each process. Unlike RLIMIT_AS it
   * does not count address space reserved but not made writable, so JIT runtimes (Node, the JVM) start.
   */
  dataMb?: number;
  /** RLIMIT_CPU in seconds of CPU time per process (rlimit mode, one-shot execs only). */
  cpuSeconds?: number;
  /** RLIMIT_NPROC and the shell flag that sets it (`-u` in bash, `-p` in dash). */
  processes?: { count: number; flag: '-u' | '-p' };
};

/**
 * The script every exec runs under `sh -c`: wait at the gate (when limits use cgroups), apply the
 * rlimits, enter the workdir (created on demand), then the command on its own lines.
 */
export function buildExecScript(opts: { workdir: string; cmd: string; limits: ShellLimits; gate: boolean; env?: Readonly<Record<string, string>> }): string {
  const lines: string[] = [];
  // The caller's variables take effect here, inside the namespaces and under seccomp, never on the host.
  const exports = Object.entries(opts.env ?? {}).map(([k, v]) => `export ${k}=${shQuote(v)}`);
  if (exports.length > 0) lines.push(exports.join('; '));
  // The gate: one line means "moved into the cgroup"; end of file (lbot gave up or died) means stop.
  if (opts.gate) lines.push('read -r _ <&3 || exit 125; exec 3<&-');
  const ul = [`ulimit -f ${Math.floor(opts.limits.fileBytes / 512)}`, `ulimit -n ${opts.limits.openFiles}`];
  if (opts.limits.dataMb !== undefined) ul.push(`ulimit -d ${opts.limits.dataMb * 1024}`);
  if (opts.limits.cpuSeconds !== undefined) ul.push(`ulimit -t ${opts.limits.cpuSeconds}`);
  if (opts.limits.processes) ul.push(`ulimit ${opts.limits.processes.flag} ${opts.limits.processes.count}`);
  // Every limit must hold: a refused one stops the command (&&, not ;, so none is skipped silently).
  lines.push(`${ul.join(' && ')} || exit 125`);
  const w = shQuote(opts.workdir);
  lines.push(`cd ${w} 2>/dev/null || { mkdir -p ${w} && cd ${w}; } || exit 1`);
  lines.push(opts.cmd);
  return lines.join('\n');
}

export type HostTools = { setpriv: string; nsenter: string; unshare: string };

/** The fixed environment of the host-side helpers (setpriv, nsenter): nothing a caller chose. */
export const HELPER_ENV: Readonly<Record<string, string>> = { PATH: SANDBOX_PATH, HOME: '/home', PYTHONUNBUFFERED: '1', LANG: 'C.UTF-8' };

/**
 * The argv that runs a script inside a session's namespaces: no-new-privileges, (as root) the sandbox
 * uid with no capabilities, then the seccomp helper loads the filter before the shell starts.
 */
export function buildEnterArgv(
  tools: Pick<HostTools, 'setpriv' | 'nsenter'>,
  nsPid: number,
  script: string,
  opts: { runAs?: { uid: number; gid: number } | null; network?: NetworkMode } = {},
): string[] {
  const runAs = opts.runAs ?? null;
  const drop = runAs ? dropPrivilegeArgs(runAs) : [];
  // With network on the holder shares the host's network namespace: there is nothing to enter (and an
  // unprivileged uid may not enter it).
  const net = opts.network === 'on' ? [] : ['--net'];
  return [
    tools.setpriv,
    ...drop,
    '--no-new-privs',
    tools.nsenter,
    '--target',
    String(nsPid),
    '--user',
    '--mount',
    '--pid',
    ...net,
    '--ipc',
    '--uts',
    '--preserve-credentials',
    '--',
    SECCOMP_EXEC_MOUNT,
    SECCOMP_FILTER_MOUNT,
    '/bin/sh',
    '-c',
    script,
    'sh',
  ];
}
