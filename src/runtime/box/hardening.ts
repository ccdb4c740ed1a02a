// The sandbox hardening the box's bwrap backend and sandboxed runner plugins share: who the sandbox
// runs as, the read-only system view, the privilege drop, and the root-only stage of host sources.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readlinkSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_SANDBOX_ID } from '../../core/config.js';

/** A top-level host entry such as /bin: a symlink to re-create (merged /usr) or a directory to bind. */
export type SystemLink = { path: string; target: string | null };

export type RunAs = { uid: number; gid: number };

/** As root the sandbox never runs as root: the unprivileged ids it runs as; null when lbot is not root. */
export function sandboxRunAs(uid: number = DEFAULT_SANDBOX_ID, gid: number = DEFAULT_SANDBOX_ID): RunAs | null {
  return process.getuid?.() === 0 ? { uid, gid } : null;
}

/** The host's top-level system entries outside /usr, as they are on this distribution. */
export function systemLinks(): SystemLink[] {
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

const MINIMAL_DEV = ['null', 'zero', 'full', 'random', 'urandom'];
const ETC_ALWAYS = ['/etc/alternatives', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/ssl', '/etc/ca-certificates', '/etc/localtime'];
/** Name resolution files: bound only when the sandbox has the network. */
export const ETC_NETWORK = ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/gai.conf'];

/** bwrap arguments for the read-only system: /usr, the top-level links, the /etc files programs need. */
export function systemBindArgs(links: readonly SystemLink[], network: boolean): string[] {
  const a = ['--ro-bind', '/usr', '/usr'];
  for (const l of links) {
    if (l.target !== null) a.push('--symlink', l.target, l.path);
    else a.push('--ro-bind-try', l.path, l.path);
  }
  for (const p of ETC_ALWAYS) a.push('--ro-bind-try', p, p);
  if (network) for (const p of ETC_NETWORK) a.push('--ro-bind-try', p, p);
  return a;
}

/** bwrap arguments for a fresh /proc (of the sandbox's own pid namespace) and /dev. */
export function procDevArgs(dev: 'dev' | 'minimal'): string[] {
  const a = ['--proc', '/proc'];
  if (dev === 'dev') {
    a.push('--dev', '/dev');
    return a;
  }
  // `minimal`: device binds only, for hosts where devpts would nest namespaces.
  a.push('--tmpfs', '/dev');
  for (const d of MINIMAL_DEV) a.push('--dev-bind-try', `/dev/${d}`, `/dev/${d}`);
  a.push('--symlink', '/proc/self/fd', '/dev/fd', '--symlink', '/proc/self/fd/0', '/dev/stdin', '--symlink', '/proc/self/fd/1', '/dev/stdout');
  a.push('--symlink', '/proc/self/fd/2', '/dev/stderr', '--tmpfs', '/dev/shm');
  return a;
}

/** setpriv arguments that become `runAs` with no capabilities and no supplementary groups. */
export function dropPrivilegeArgs(runAs: RunAs): string[] {
  return [`--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all'];
}

/** A path as an fstab field: the characters fstab splits on, and the backslash, as octal escapes. */
function fstabField(p: string): string {
  return p.replace(/[\\ \t\n]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/**
 * The binds as an fstab file in `dir` (root-owned, writable by root alone: whoever could write it could
 * bind any host path into the sandbox), named after its content so launches with the same binds share it.
 */
export function writeStageFstab(dir: string, binds: readonly { source: string; target: string }[]): string {
  const text = binds.map((b) => `${fstabField(b.source)} ${fstabField(b.target)} none bind 0 0\n`).join('');
  const file = path.join(dir, `fstab-${createHash('sha256').update(text).digest('hex').slice(0, 16)}`);
  if (!existsSync(file)) {
    const tmp = `${file}.${randomBytes(6).toString('hex')}`;
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, file);
  }
  return file;
}

/**
 * As root: a private mount namespace where every host source is bound onto its stage path (readable
 * by the sandbox uid whatever the modes of the source's parents) by one `mount -a` over an fstab of
 * the binds written into the stage dir (one process, where a `mount` per bind cost a millisecond or
 * two each), then setpriv drops to that uid with no capabilities and no supplementary groups before
 * the sandbox is built. `prelude` runs first, still as root (e.g. joining a cgroup).
 */
export function stageArgv(
  stage: RunAs & { dir: string; binds: readonly { source: string; target: string }[] },
  argv: readonly string[],
  unshare: string,
  setpriv: string,
  prelude: readonly string[] = [],
): string[] {
  const fstab = stage.binds.length > 0 ? writeStageFstab(stage.dir, stage.binds) : null;
  const script = [
    ...prelude,
    ...(fstab ? ['mount -a --fstab "$1" || exit 97'] : []),
    'shift',
    `exec ${setpriv} ${dropPrivilegeArgs(stage).join(' ')} -- "$@"`,
  ].join('\n');
  return [unshare, '--mount', '--propagation', 'private', '--', '/bin/sh', '-c', script, 'lbot-stage', fstab ?? '', ...argv];
}
