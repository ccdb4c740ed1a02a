// Host-mount policy: allowlist roots and the denylist, compared by resolved real path (box.md §9.1, §9.2).
import { lstatSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { boxError, validationError } from './errors.js';
import { SKILL_MOUNT_PREFIX, type BoxSpec, type MountSpec } from './model.js';
import { isUnderPath } from './spec.js';

/** Exact paths that are never mountable (their children may be, through the allowlist). */
const DENY_EXACT = ['/', '/usr', '/opt', '/var', '/home', '/tmp', '/srv', '/mnt', '/media', '/bin', '/sbin', '/lib', '/lib64'];
/** Paths that are never mountable, nor anything beneath them. */
const DENY_PREFIX = ['/etc', '/proc', '/sys', '/dev', '/root', '/boot', '/run', '/var/run', '/var/lib/docker', '/var/lib/containers'];
/** Mount paths inside the sandbox that would shadow its own system directories. */
const RESERVED_MOUNT_PATHS = ['/proc', '/dev', '/sys', '/usr', '/etc', '/bin', '/lib', '/lib64', '/sbin', '/.lbot'];

export type MountPolicy = {
  /** Real paths of the roots host mounts may come from; empty = host mounts are switched off. */
  readonly allowedRoots: readonly string[];
  /** Extra denied prefixes: the user's home (exact) and its secrets, the lbot data dir. */
  readonly home: string | null;
  readonly protectedPaths: readonly string[];
  /** Root under which skill packages live; skill mounts are checked against it instead of the allowlist. */
  readonly skillsRoot: string | null;
};

/** Real path of `p`, or of its longest existing prefix joined with the rest (for paths that do not exist yet). */
export function resolveReal(p: string): string {
  const abs = path.resolve(p);
  let head = abs;
  const tail: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync(head), ...tail.reverse());
    } catch {
      const parent = path.dirname(head);
      if (parent === head) return abs;
      tail.push(path.basename(head));
      head = parent;
    }
  }
}

/** Why a resolved host path is denied, or null when the denylist allows it. */
export function deniedReason(real: string, policy: Pick<MountPolicy, 'home' | 'protectedPaths'>): string | null {
  if (real === '/') return 'the root filesystem';
  if (DENY_EXACT.includes(real)) return 'a system directory';
  if (DENY_PREFIX.some((d) => isUnderPath(real, d))) return 'a system directory';
  if (/\.sock$/.test(real) || /(docker|podman|containerd)\.sock/.test(real)) return 'a container engine socket';
  if (policy.home) {
    if (real === policy.home) return "the user's home directory";
    for (const secret of ['.ssh', '.gnupg', '.config', '.aws', '.kube', '.docker']) {
      if (isUnderPath(real, path.join(policy.home, secret))) return 'a directory holding credentials';
    }
  }
  if (policy.protectedPaths.some((p) => isUnderPath(real, p))) return "inside lbot's data directory";
  return null;
}

/**
 * Builds the policy from `box.allowed_mount_roots`: each root is resolved to its real path; a root
 * that is `/`, denied, or missing is dropped with a warning, never honoured.
 */
export function createMountPolicy(
  configuredRoots: readonly string[],
  opts: { home?: string | null; protectedPaths?: readonly string[]; skillsRoot?: string | null; cwd?: string; warn?: (message: string) => void },
): MountPolicy {
  const home = opts.home ? resolveReal(opts.home) : null;
  const protectedPaths = (opts.protectedPaths ?? []).map(resolveReal);
  const roots: string[] = [];
  for (const raw of configuredRoots) {
    const trimmed = raw.trim();
    if (!trimmed) continue;
    const real = resolveReal(path.resolve(opts.cwd ?? process.cwd(), trimmed));
    let isDir = false;
    try {
      isDir = statSync(real).isDirectory();
    } catch {
      isDir = false;
    }
    const reason = deniedReason(real, { home, protectedPaths });
    if (reason) opts.warn?.(`box.allowed_mount_roots entry ${trimmed} is ${reason}; it is ignored`);
    else if (!isDir) opts.warn?.(`box.allowed_mount_roots entry ${trimmed} is not an existing directory; it is ignored`);
    else if (!roots.includes(real)) roots.push(real);
  }
  return { allowedRoots: roots, home, protectedPaths, skillsRoot: opts.skillsRoot ? resolveReal(opts.skillsRoot) : null };
}

function rootsText(policy: MountPolicy): string {
  return policy.allowedRoots.length > 0 ? policy.allowedRoots.join(', ') : '(none: host mounts are switched off)';
}

/** Validates one host directory against the policy; returns its real path. `field` names it in messages. */
export function validateHostDir(hostPath: string, policy: MountPolicy, field = 'host_path'): string {
  const real = resolveReal(hostPath);
  const reason = deniedReason(real, policy);
  if (reason) {
    throw boxError('box.mount_denied', `${field} ${hostPath} is blocked for security (${reason}); allowed_mount_roots: ${rootsText(policy)}`, {
      field,
      host_path: hostPath,
      resolved: real,
      allowed_mount_roots: policy.allowedRoots,
    });
  }
  let isDir = false;
  try {
    isDir = statSync(real).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw validationError(`${field} must point to an existing directory on the host: ${hostPath}`, { field, host_path: hostPath });
  if (policy.allowedRoots.length === 0) {
    throw boxError(
      'box.mount_denied',
      `${field} ${hostPath} cannot be mounted: host mounts are switched off because box.allowed_mount_roots is empty`,
      { field, host_path: hostPath, allowed_mount_roots: [] },
      'add a directory to box.allowed_mount_roots in lbot.config.json to allow host mounts',
    );
  }
  if (!policy.allowedRoots.some((root) => isUnderPath(real, root))) {
    throw boxError('box.mount_denied', `${field} ${hostPath} is outside allowed_mount_roots: ${rootsText(policy)}`, {
      field,
      host_path: hostPath,
      resolved: real,
      allowed_mount_roots: policy.allowedRoots,
    });
  }
  return real;
}

/** A mount path inside the sandbox must not shadow its system directories. */
export function validateMountPath(mountPath: string, field: string): void {
  if (mountPath === '/' || RESERVED_MOUNT_PATHS.some((r) => isUnderPath(mountPath, r))) {
    throw validationError(`${field} ${mountPath} would shadow a sandbox system directory`, { field, mount_path: mountPath });
  }
}

function validateSkillMount(m: MountSpec, policy: MountPolicy, field: string): string {
  const real = resolveReal(m.host_path);
  if (!policy.skillsRoot || !isUnderPath(real, policy.skillsRoot) || real === policy.skillsRoot) {
    throw boxError('box.mount_denied', `${field} ${m.host_path} is not a skill package under the skills root`, { field, host_path: m.host_path });
  }
  const reason = deniedReason(real, { home: policy.home, protectedPaths: [] });
  if (reason) throw boxError('box.mount_denied', `${field} ${m.host_path} is blocked for security (${reason})`, { field, host_path: m.host_path });
  return real;
}

/**
 * Checks every host mount of a spec (primary and extra) and returns the spec with host paths replaced
 * by their real paths, so that a symlink swapped in later cannot redirect the mount.
 */
export function validateSpecMounts(spec: BoxSpec, policy: MountPolicy, opts: { skipPrimary?: boolean } = {}): BoxSpec {
  validateMountPath(spec.mount_path, 'mount_path');
  let host_path = spec.host_path;
  if (host_path !== null && spec.host_path_mode !== 'none' && !opts.skipPrimary) host_path = validateHostDir(host_path, policy, 'host_path');
  const extra_mounts = spec.extra_mounts.map((m) => {
    const field = `mount ${m.host_path}:${m.mount_path}`;
    validateMountPath(m.mount_path, field);
    if (m.mode === 'none') return m;
    if (isUnderPath(m.mount_path, SKILL_MOUNT_PREFIX) && m.mount_path !== SKILL_MOUNT_PREFIX) {
      return { ...m, host_path: validateSkillMount(m, policy, field), mode: 'ro' as const };
    }
    return { ...m, host_path: validateHostDir(m.host_path, policy, field) };
  });
  return { ...spec, host_path, extra_mounts };
}

/**
 * A mount target nested in a host-backed mount (e.g. /workspace/sub with /workspace bound from a host dir)
 * is created by the sandbox inside that host dir; refuse when a path component there is a symlink, so a
 * planted link cannot redirect the mount point outside the workspace.
 */
export function assertNoSymlinkOnPath(hostRoot: string, relative: string, field: string): void {
  let current = hostRoot;
  for (const part of relative.split('/').filter(Boolean)) {
    current = path.join(current, part);
    let isLink = false;
    try {
      isLink = lstatSync(current).isSymbolicLink();
    } catch {
      return;
    }
    if (isLink) throw boxError('box.mount_denied', `${field}: ${current} is a symlink; mount targets must not pass through symlinks`, { field, path: current });
  }
}
