// Host mounts of the bwrap backend: pinned to the inode validation saw, staged for a sandbox uid that
// cannot reach the source by path, and session dirs under a base that uid may traverse.
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readlinkSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { LbotError } from '../../core/errors.js';

export type MountPin = { mountPath: string; hostPath: string; dev: number; ino: number };

function denied(message: string, details: Record<string, unknown>): LbotError {
  return new LbotError('box.mount_denied', message, {
    details,
    hint: 'host paths must not change while a session starts; mount a directory that no sandbox can rename',
  });
}

/**
 * Opens a validated host path without following a final symlink and checks the opened file is the
 * validated one (a parent swapped for a symlink shows in the fd's real path): returns its identity.
 */
export function pinMount(hostPath: string, mountPath: string): MountPin {
  let fd: number;
  try {
    fd = openSync(hostPath, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = err instanceof Error && 'code' in err ? String(err.code) : 'error';
    throw denied(`host path ${hostPath} changed after validation (${code === 'ELOOP' ? 'it is now a symlink' : code})`, {
      host_path: hostPath,
      mount_path: mountPath,
    });
  }
  try {
    const real = readlinkSync(`/proc/self/fd/${fd}`);
    if (real !== hostPath)
      throw denied(`host path ${hostPath} changed after validation: it now resolves to ${real}`, {
        host_path: hostPath,
        resolved: real,
        mount_path: mountPath,
      });
    const st = fstatSync(fd);
    return { mountPath, hostPath, dev: st.dev, ino: st.ino };
  } finally {
    closeSync(fd);
  }
}

/**
 * Root hosts: the sandbox uid must be able to use a host mount by the directory's own modes (lbot
 * changes no owner or mode of the operator's files). Supplementary groups are cleared, ACLs ignored.
 */
export function assertSandboxAccess(hostPath: string, mode: 'ro' | 'rw', uid: number, gid: number): void {
  const st = statSync(hostPath);
  const shift = st.uid === uid ? 6 : st.gid === gid ? 3 : 0;
  const bits = (st.mode >> shift) & 0o7;
  const need = mode === 'rw' ? 0o7 : 0o5;
  if ((bits & need) === need) return;
  throw new LbotError(
    'box.mount_denied',
    `the sandbox runs as uid ${uid} (lbot runs as root) and cannot ${mode === 'rw' ? 'write to' : 'read'} ${hostPath} (owner ${st.uid}, mode ${(st.mode & 0o777).toString(8)})`,
    {
      details: { host_path: hostPath, mode, sandbox_uid: uid },
      hint: `make it ${mode === 'rw' ? 'writable' : 'readable'} by uid ${uid} (chown -R ${uid}:${gid} ${hostPath}), or set box.bwrap.sandbox_uid to its owner`,
    },
  );
}

/** After the sandbox is up: every pinned mount shows the pinned inode, or the session is refused. */
export function verifyPins(nsPid: number, pins: readonly MountPin[]): void {
  for (const pin of pins) {
    let st: { dev: number; ino: number };
    try {
      st = statSync(`/proc/${nsPid}/root${pin.mountPath}`);
    } catch (err) {
      throw denied(`mount ${pin.mountPath} could not be checked in the sandbox (${err instanceof Error ? err.message : String(err)})`, {
        host_path: pin.hostPath,
        mount_path: pin.mountPath,
      });
    }
    if (st.dev !== pin.dev || st.ino !== pin.ino) {
      throw denied(`host path ${pin.hostPath} was swapped while the session started; the sandbox showed another directory at ${pin.mountPath}`, {
        host_path: pin.hostPath,
        mount_path: pin.mountPath,
      });
    }
  }
}

/**
 * Root hosts: each host source is bound onto a stage path by root in the holder's private mount
 * namespace, so the sandbox uid (which cannot traverse a 0700 data dir) binds the stage path instead.
 */
export class Stage {
  readonly binds: { source: string; target: string }[] = [];

  constructor(
    readonly dir: string,
    private readonly enabled: boolean,
  ) {}

  add(source: string, kind: 'dir' | 'file'): string {
    if (!this.enabled) return source;
    mkdirSync(this.dir, { recursive: true, mode: 0o711 });
    const target = path.join(this.dir, String(this.binds.length));
    if (kind === 'dir') mkdirSync(target, { mode: 0o755 });
    else writeFileSync(target, '', { mode: 0o644 });
    this.binds.push({ source, target });
    return target;
  }
}

/** The default base of bwrap session dirs for root: outside the (0700) data dir, one per data dir. */
export function privilegedBaseDir(boxRoot: string): string {
  const hash = createHash('sha256').update(boxRoot).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), 'lbot-box-0', hash);
}

/**
 * Makes sure the sandbox uid can traverse to `baseDir` and nobody else can tamper with it: the base
 * and its parent are real directories owned by root and writable by root alone; every ancestor is
 * traversable by others.
 */
export function preparePrivateBase(baseDir: string): void {
  mkdirSync(baseDir, { recursive: true, mode: 0o711 });
  for (const dir of [path.dirname(baseDir), baseDir]) {
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.uid !== 0 || (st.mode & 0o022) !== 0) {
      throw new LbotError('box.unavailable', `the sandbox base ${dir} is not a root-owned directory writable by root alone; remove it and retry`, {
        details: { reason: 'backend_missing', path: dir },
      });
    }
  }
  chmodSync(path.dirname(baseDir), 0o711);
  chmodSync(baseDir, 0o711);
  for (let dir = baseDir; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) {
      throw new LbotError('box.unavailable', `the sandbox uid cannot traverse ${dir} on the way to the session base ${baseDir}`, {
        details: { reason: 'backend_missing', path: dir },
        hint: 'unset box.bwrap.base_dir (the default lives under the system temp dir) or make every parent traversable (chmod o+x)',
      });
    }
  }
}
