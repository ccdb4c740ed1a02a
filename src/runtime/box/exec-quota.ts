// The workspace quota around one command: measured before, watched during (unless a size-limited
// filesystem enforces it), measured after; an unreadable workspace counts as over quota.
import path from 'node:path';
import type { BoxSpec, BoxStatus } from '../../core/box/model.js';
import { QUOTA_MARGIN_BYTES, quotaExceeded, quotaLimitBytes, quotaUnreadable, measureUsage, unmeasurablePath, type QuotaPhase } from '../../core/box/quota.js';
import type { BoxLayout } from './layout.js';
import { ensureQuotaWatcher, pendingQuotaStops } from './quota-watch.js';
import type { ExecRequest, SandboxBackend, SessionRecord } from './backend.js';

const WATCHDOG_INTERVAL_MS = 250;

/** Where the quota applies, as errors name it. */
const whereOf = (spec: BoxSpec): string => spec.host_path ?? 'the session workspace';

/** Usage for a quota check; a workspace lbot cannot measure counts as over quota (box.quota_exceeded). */
async function usage(phase: QuotaPhase, measure: () => Promise<number>, spec: BoxSpec): Promise<number> {
  try {
    return await measure();
  } catch (err) {
    if (unmeasurablePath(err) !== null) throw quotaUnreadable(phase, err, quotaLimitBytes(spec.workspace_quota_mb), whereOf(spec), spec.session_id);
    throw err;
  }
}

/** Refuses a command whose workspace is already over quota (the session's, else the host path's). */
export async function checkQuotaBefore(spec: BoxSpec, backend: SandboxBackend, existing: SessionRecord | null): Promise<void> {
  if (spec.workspace_quota_mb <= 0) return;
  const hostPath = spec.host_path;
  const measure = () => (existing ? backend.usage(existing) : hostPath ? measureUsage([hostPath]) : Promise.resolve(0));
  const used = await usage('before', measure, spec);
  const limit = quotaLimitBytes(spec.workspace_quota_mb);
  if (used > limit) throw quotaExceeded('before', used, limit, whereOf(spec), spec.session_id);
}

/** Whether the quota is over after a command; `onBreach` runs (the session is dropped) before the error is thrown. */
export async function checkQuotaAfter(spec: BoxSpec, backend: SandboxBackend, record: SessionRecord, onBreach: () => Promise<unknown>): Promise<void> {
  if (spec.workspace_quota_mb <= 0) return;
  const used = await usage('after', () => backend.usage(record), spec).catch(async (err: unknown) => {
    await onBreach();
    throw err;
  });
  const limit = quotaLimitBytes(spec.workspace_quota_mb);
  if (used > limit) {
    await onBreach();
    throw quotaExceeded('after', used, limit, whereOf(spec), spec.session_id);
  }
}

/** The in-command watchdog that stops a command writing past the quota (none when a filesystem enforces it). */
export function quotaWatchdog(spec: BoxSpec, backend: SandboxBackend, record: SessionRecord): Pick<ExecRequest, 'watchdog'> {
  const hardQuota = record.backend_state.volume === true && spec.host_path === null;
  if (spec.workspace_quota_mb <= 0 || hardQuota) return {};
  const limit = quotaLimitBytes(spec.workspace_quota_mb);
  return {
    watchdog: {
      intervalMs: WATCHDOG_INTERVAL_MS,
      check: async () => {
        let used: number;
        try {
          used = await backend.usage(record);
        } catch (err) {
          const unreadable = unmeasurablePath(err);
          if (unreadable !== null) return `lbot: stopped: the workspace cannot be measured for its quota (${unreadable} cannot be read by lbot)`;
          throw err;
        }
        return used > limit + QUOTA_MARGIN_BYTES
          ? `lbot: stopped: the workspace quota of ${spec.workspace_quota_mb} MiB was exceeded (${used} bytes used)`
          : null;
      },
    },
  };
}

/**
 * Starts the session's quota watcher when its quota is not enforced by a size-limited filesystem: it
 * outlives this command and stops the session's processes (background ones too) on a breach.
 */
export async function watchSessionQuota(layout: BoxLayout, record: SessionRecord, backend: SandboxBackend): Promise<boolean> {
  const info = record.info;
  if (info.workspace_quota_mb <= 0 || (record.backend_state.volume === true && info.host_path === null)) return false;
  const plan = backend.quotaWatch?.(record) ?? null;
  if (!plan) return false;
  const limit = quotaLimitBytes(info.workspace_quota_mb);
  await ensureQuotaWatcher(layout, record, plan, {
    limitBytes: limit,
    thresholdBytes: limit + QUOTA_MARGIN_BYTES,
    where: info.host_path ?? 'the session workspace',
    errorsFile: layout.errorsFile,
    errorsLock: path.join(layout.locksDir, 'errors.lock'),
  });
  return true;
}

/** Sessions the quota watcher stopped whose stop no command has reported yet (absent when none). */
export function quotaStopsField(layout: BoxLayout): Pick<BoxStatus, 'quota_stops'> {
  const stops = pendingQuotaStops(layout);
  if (stops.length === 0) return {};
  return { quota_stops: stops.map((s) => ({ session_id: s.session_id, code: s.code, message: s.message, stopped_at: s.stopped_at })) };
}
