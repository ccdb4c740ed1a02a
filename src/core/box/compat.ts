// Session compatibility: which spec fields must match to reuse a session (box.md §5.3).
import { COMPAT_FIELDS, type BoxSpec, type MountSpec, type SessionInfo } from './model.js';

export type Difference = { field: string; stored: unknown; requested: unknown };

function mountsKey(mounts: readonly MountSpec[]): string {
  return JSON.stringify([...mounts].sort((a, b) => a.mount_path.localeCompare(b.mount_path)).map((m) => [m.host_path, m.mount_path, m.mode]));
}

/** The first field on which the stored session and the new spec differ (extra mounts last), or null. */
export function firstDifference(stored: SessionInfo, spec: BoxSpec): Difference | null {
  for (const field of COMPAT_FIELDS) {
    if (stored[field] !== spec[field]) return { field, stored: stored[field], requested: spec[field] };
  }
  if (mountsKey(stored.extra_mounts) !== mountsKey(spec.extra_mounts)) {
    return { field: 'extra_mounts', stored: stored.extra_mounts, requested: spec.extra_mounts };
  }
  return null;
}
