// `lbot box status`: availability, the backend that would be chosen and why, and the counts (box.md §10.3).
import type { BoxConfig } from '../../core/config.js';
import type { BackendName, BoxStatus } from '../../core/box/model.js';
import { toLbotError } from '../../core/errors.js';
import { selectBackend, type BackendSet } from './select.js';

type StatusInput = {
  config: BoxConfig;
  override: BackendName | null;
  backends: BackendSet;
  counts: Pick<BoxStatus, 'active_sessions' | 'managed_processes' | 'recent_error_count' | 'quota_stops'>;
};

/** Never throws: an unavailable backend is reported in the status. */
export async function boxStatus({ config, override, backends, counts }: StatusInput): Promise<BoxStatus> {
  const base = {
    enabled: config.enabled,
    profile: config.profile,
    active_sessions: counts.active_sessions,
    managed_processes: counts.managed_processes,
    session_ttl_sec: config.session_ttl_sec,
    recent_error_count: counts.recent_error_count,
    ...(counts.quota_stops ? { quota_stops: counts.quota_stops } : {}),
  };
  try {
    const { backend, probe } = await selectBackend(backends, config, override);
    return {
      ...base,
      available: true,
      backend: {
        name: backend.name,
        available: true,
        reason: probe.reason,
        ...(probe.limits_mode ? { limits_mode: probe.limits_mode } : {}),
        ...(probe.seccomp ? { seccomp: probe.seccomp } : {}),
      },
    };
  } catch (err) {
    const e = toLbotError(err);
    const name = override ?? (config.backend === 'auto' ? null : config.backend);
    return { ...base, available: false, backend: { name, available: false, reason: e.message }, connector_error: e.message };
  }
}
