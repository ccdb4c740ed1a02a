// The four built-in box profiles and the merge order profile → request → locked → timeout clamp (box.md §3).
import { DEFAULT_BOX_IMAGE, type HostMountMode, type NetworkMode } from './model.js';
import { validationError } from './errors.js';

export const PROFILE_FIELDS = [
  'image',
  'network',
  'timeout_sec',
  'host_path_mode',
  'cpus',
  'memory_mb',
  'pids_limit',
  'read_only_rootfs',
  'workspace_quota_mb',
] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];

export type BoxProfile = {
  readonly name: string;
  readonly image: string;
  readonly network: NetworkMode;
  readonly timeout_sec: number;
  readonly host_path_mode: HostMountMode;
  readonly max_timeout_sec: number;
  readonly cpus: number;
  readonly memory_mb: number;
  readonly pids_limit: number;
  readonly read_only_rootfs: boolean;
  readonly workspace_quota_mb: number;
  readonly locked: ReadonlySet<ProfileField>;
};

const base = {
  image: DEFAULT_BOX_IMAGE,
  timeout_sec: 30,
  host_path_mode: 'rw',
  cpus: 1,
  memory_mb: 512,
  pids_limit: 128,
  read_only_rootfs: true,
  workspace_quota_mb: 0,
  max_timeout_sec: 120,
  locked: new Set<ProfileField>(),
} as const;

export const PROFILES: Readonly<Record<string, BoxProfile>> = {
  default: { ...base, name: 'default', network: 'off' },
  offline_readonly: {
    ...base,
    name: 'offline_readonly',
    network: 'off',
    host_path_mode: 'ro',
    cpus: 0.5,
    memory_mb: 256,
    pids_limit: 64,
    max_timeout_sec: 60,
    locked: new Set<ProfileField>(['network', 'host_path_mode', 'read_only_rootfs']),
  },
  network_basic: { ...base, name: 'network_basic', network: 'on' },
  network_extended: {
    ...base,
    name: 'network_extended',
    network: 'on',
    cpus: 2,
    memory_mb: 1024,
    pids_limit: 256,
    read_only_rootfs: false,
    max_timeout_sec: 300,
  },
};

/** The profile called `name`; an unknown name is a box.validation error listing the available ones. */
export function getProfile(name: string): BoxProfile {
  const profile = Object.hasOwn(PROFILES, name) ? PROFILES[name] : undefined;
  if (!profile) {
    throw validationError(`unknown box profile '${name}', available profiles: ${Object.keys(PROFILES).join(', ')}`, { profile: name });
  }
  return profile;
}

/** Integer value of a number or numeric string ("999", 999.0 → 999), else undefined. */
export function coerceInteger(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isInteger(n) ? n : undefined;
}

/**
 * Applies a profile to a loose request: locked fields overwrite the caller, missing fields take the
 * profile's value, then `timeout_sec` is clamped to the profile's `max_timeout_sec`.
 */
export function applyProfile(params: Record<string, unknown>, profile: BoxProfile): Record<string, unknown> {
  const out: Record<string, unknown> = { ...params };
  for (const field of PROFILE_FIELDS) {
    if (profile.locked.has(field) || out[field] === undefined || out[field] === null) out[field] = profile[field];
  }
  const timeout = coerceInteger(out.timeout_sec);
  if (timeout !== undefined) out.timeout_sec = Math.min(timeout, profile.max_timeout_sec);
  return out;
}
