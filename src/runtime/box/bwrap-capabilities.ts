// What the bwrap backend can use on this machine, probed once: binaries, a smoke sandbox, the seccomp
// filter through its helper, the limits mode, the quota volume.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { packagePath } from '../../package-root.js';
import path from 'node:path';
import { buildSeccompFilter, deniedSyscallNames, seccompArchFor } from '../../core/box/seccomp.js';
import { systemLinks } from './hardening.js';
import { cgroupHost, probeLimits, warnLimitsOnce, type LimitsMode, type LimitsPlan, type LimitsPreference } from './limits.js';
import { findExecutable, probeCommand } from './host-tools.js';
import type { HostTools, SystemLink } from './bwrap-args.js';

/** The backend options the probe reads. */
export type BwrapProbeOptions = {
  bin: string;
  baseDir: string;
  limits: LimitsPreference;
  /** The compiled seccomp exec helper (dist/native/lbot-seccomp-exec). */
  seccompHelper?: string;
  /** Where the cgroup filesystems are mounted (default /sys/fs/cgroup; tests point it at a temp dir). */
  cgroupRoot?: string;
  /** Where the limits warning goes (once per process); default: stderr. */
  warn?: (message: string) => void;
};

const DEFAULT_SECCOMP_HELPER = packagePath('dist', 'native', 'lbot-seccomp-exec');

export type Capabilities = {
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
  /** The in-session exec agent (dist/native/lbot-exec-agent, next to the seccomp helper); null when not built. */
  agent: string | null;
};

export async function detectBwrap(opts: BwrapProbeOptions): Promise<Capabilities | string> {
  const bwrap = findExecutable(opts.bin);
  if (!bwrap) return `bubblewrap (${opts.bin}) is not installed; on Debian/Ubuntu: apt-get install -y bubblewrap`;
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
  const seccomp = await probeSeccomp(opts);
  if (typeof seccomp === 'string') return seccomp;
  const limits = probeLimits(opts.limits, cgroupHost(opts.cgroupRoot));
  if (!limits.usable) return limits.reason;
  if (limits.warning) warnLimitsOnce(limits.warning, opts.warn);
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
    agent: existsSync(path.join(path.dirname(seccomp.helper), 'lbot-exec-agent')) ? path.join(path.dirname(seccomp.helper), 'lbot-exec-agent') : null,
  };
}

/** The filter for this machine's architecture, checked by loading it once through the helper. */
async function probeSeccomp(opts: BwrapProbeOptions): Promise<Capabilities['seccomp'] | string> {
  const arch = seccompArchFor(process.arch);
  if (!arch) return `no seccomp filter for the ${process.arch} architecture; the bwrap backend supports x64 and arm64`;
  const helper = opts.seccompHelper ?? DEFAULT_SECCOMP_HELPER;
  if (!existsSync(helper))
    return `the seccomp helper ${helper} is missing: it is compiled by npm run build (needs a C compiler: apt-get install -y gcc libc6-dev)`;
  const filter = buildSeccompFilter(arch);
  mkdirSync(opts.baseDir, { recursive: true, mode: 0o700 });
  const probeFile = path.join(opts.baseDir, `seccomp-probe-${process.pid}.bpf`);
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
