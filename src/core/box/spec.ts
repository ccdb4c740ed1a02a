// Building a validated BoxSpec from a loose request: config defaults, profile merge, validation (box.md §2.3, §4).
import path from 'node:path';
import { assertSafeEnv } from '../env-policy.js';
import { isRecord } from '../json.js';
import { boxError, validationError } from './errors.js';
import { applyProfile, coerceInteger, type BoxProfile } from './profiles.js';
import { DEFAULT_MOUNT_PATH, ENV_NAME_PATTERN, HostMountModeSchema, MountSpecSchema, NetworkModeSchema, type BoxSpec, type MountSpec } from './model.js';

/** Config values that feed spec building (flat `box.*` keys, acceptance §0.5). */
export type SpecDefaults = {
  profile: BoxProfile;
  /** `box.image`: used when the request names no image. */
  image?: string | null;
  /** `box.workspace_quota_mb`: used when the request names no quota. */
  workspace_quota_mb?: number | null;
  /** `box.workspace_scope: shared` → this host dir is the primary mount when the request names none. */
  shared_workspace?: string | null;
};

/** A loose request as it arrives from a flag set, a tool call or an internal caller. */
export type SpecRequest = Record<string, unknown>;

const fail = (message: string, field: string): never => {
  throw validationError(message, { field });
};

function text(value: unknown, field: string): string {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return fail(`${field} must be a string`, field);
}

function integer(value: unknown, field: string, min: number): number {
  const n = coerceInteger(value);
  if (n === undefined) return fail(`${field} must be an integer`, field);
  if (n < min) return fail(min === 1 ? `${field} must be greater than 0` : `${field} must be >= ${min}`, field);
  return n;
}

function positive(value: unknown, field: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isFinite(n)) return fail(`${field} must be a number`, field);
  if (n <= 0) return fail(`${field} must be greater than 0`, field);
  return n;
}

function bool(value: unknown, field: string): boolean {
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return fail(`${field} must be true or false`, field);
}

/** A clean absolute POSIX path: starts with `/`, no `..` segments; returned normalised without a trailing slash. */
export function absolutePath(value: string, field: string, host = false): string {
  if (!value.startsWith('/')) return fail(`${field} must be an absolute path (got ${JSON.stringify(value)})`, field);
  if (value.includes('\0')) return fail(`${field} must not contain NUL bytes`, field);
  if (value.split('/').includes('..')) {
    // A host path that climbs out with '..' is a mount the policy refuses, not a malformed field.
    if (host) throw boxError('box.mount_denied', `${field} must not contain '..' segments (got ${JSON.stringify(value)})`, { field, host_path: value });
    return fail(`${field} must not contain '..' segments (got ${JSON.stringify(value)})`, field);
  }
  const norm = path.posix.normalize(value);
  return norm.length > 1 && norm.endsWith('/') ? norm.slice(0, -1) : norm;
}

/** True when `p` is `root` or lies under it (POSIX strings, both already normalised). */
export function isUnderPath(p: string, root: string): boolean {
  return p === root || p.startsWith(root === '/' ? '/' : `${root}/`);
}

function env(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) return fail('env must be an object of strings', 'env');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (!ENV_NAME_PATTERN.test(k)) fail(`env name ${JSON.stringify(k)} is not a shell identifier`, 'env');
    out[k] = typeof v === 'string' ? v : String(v);
  }
  // Loader and interpreter variables are refused for every caller (CLI flag, exec tool, HTTP body).
  assertSafeEnv(out, 'box exec env');
  return out;
}

function mounts(value: unknown): MountSpec[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return fail('extra_mounts must be a list', 'extra_mounts');
  return value.map((m, i) => {
    const parsed = MountSpecSchema.safeParse(m);
    if (!parsed.success) return fail(`extra_mounts[${i}] must be {host_path, mount_path, mode?: none|ro|rw}`, 'extra_mounts');
    const host_path = absolutePath(parsed.data.host_path.trim(), `extra_mounts[${i}].host_path`, true);
    const mount_path = absolutePath(parsed.data.mount_path.trim(), `extra_mounts[${i}].mount_path`);
    return { host_path, mount_path, mode: parsed.data.mode };
  });
}

/**
 * Builds and validates a spec: config defaults, then the profile merge, then field validation in
 * the order of box.md §2.3. The first failure throws box.validation. Host paths are not checked
 * against the filesystem here (see mounts.ts).
 */
export function buildSpec(request: SpecRequest, defaults: SpecDefaults): BoxSpec {
  const p: Record<string, unknown> = { ...request };
  if ((p.host_path === undefined || p.host_path === null || p.host_path === '') && defaults.shared_workspace) p.host_path = defaults.shared_workspace;
  if (
    (p.workspace_quota_mb === undefined || p.workspace_quota_mb === null) &&
    defaults.workspace_quota_mb !== undefined &&
    defaults.workspace_quota_mb !== null
  ) {
    p.workspace_quota_mb = defaults.workspace_quota_mb;
  }
  if ((p.image === undefined || p.image === null || p.image === '') && defaults.image) p.image = defaults.image;
  const merged = applyProfile(p, defaults.profile);

  const mountPathRaw =
    merged.mount_path === undefined || merged.mount_path === null || merged.mount_path === '' ? DEFAULT_MOUNT_PATH : text(merged.mount_path, 'mount_path');
  const workdirRaw =
    merged.workdir === undefined || merged.workdir === null || text(merged.workdir, 'workdir') === '' ? mountPathRaw : text(merged.workdir, 'workdir');

  const cmd = merged.cmd === undefined || merged.cmd === null ? '' : typeof merged.cmd === 'string' ? merged.cmd : fail('cmd must be a string', 'cmd');
  const session_id = merged.session_id === undefined || merged.session_id === null ? '' : text(merged.session_id, 'session_id');
  if (!session_id) fail('session_id must not be empty', 'session_id');
  const workdir = absolutePath(workdirRaw, 'workdir');
  const timeout_sec = integer(merged.timeout_sec, 'timeout_sec', 1);
  const cpus = positive(merged.cpus, 'cpus');
  const memory_mb = integer(merged.memory_mb, 'memory_mb', 32);
  const pids_limit = integer(merged.pids_limit, 'pids_limit', 1);
  const workspace_quota_mb = integer(merged.workspace_quota_mb, 'workspace_quota_mb', 0);
  const hostRaw = merged.host_path === undefined || merged.host_path === null ? null : text(merged.host_path, 'host_path');
  const host_path = hostRaw ? absolutePath(hostRaw, 'host_path', true) : null;
  const mount_path = absolutePath(mountPathRaw, 'mount_path');
  const network = NetworkModeSchema.safeParse(merged.network);
  if (!network.success) fail(`network must be "on" or "off" (got ${JSON.stringify(merged.network)})`, 'network');
  const mode = HostMountModeSchema.safeParse(merged.host_path_mode);
  if (!mode.success) fail(`host_path_mode must be none, ro or rw (got ${JSON.stringify(merged.host_path_mode)})`, 'host_path_mode');
  const host_path_mode = mode.data ?? 'rw';
  if (host_path !== null && host_path_mode !== 'none' && !isUnderPath(workdir, mount_path)) {
    fail(`workdir must stay under mount_path when host_path is provided (workdir ${workdir}, mount_path ${mount_path})`, 'workdir');
  }
  const extra_mounts = mounts(merged.extra_mounts).sort((a, b) => a.mount_path.localeCompare(b.mount_path));
  const seen = new Set<string>([mount_path]);
  for (const m of extra_mounts) {
    if (seen.has(m.mount_path)) fail(`extra mount path ${m.mount_path} is used twice (or equals the primary mount path)`, 'extra_mounts');
    seen.add(m.mount_path);
  }
  const image = text(merged.image, 'image');
  if (!image) fail('image must not be empty', 'image');

  return {
    session_id,
    cmd,
    workdir,
    timeout_sec,
    network: network.data ?? 'off',
    env: env(merged.env),
    image,
    host_path,
    host_path_mode,
    mount_path,
    extra_mounts,
    persistent: merged.persistent === undefined || merged.persistent === null ? false : bool(merged.persistent, 'persistent'),
    cpus,
    memory_mb,
    pids_limit,
    read_only_rootfs: bool(merged.read_only_rootfs, 'read_only_rootfs'),
    workspace_quota_mb,
  };
}
