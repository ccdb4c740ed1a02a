// Run deadline from `runner_config.timeout` (runner-protocol.md §4.7).

export const DEFAULT_RUN_TIMEOUT_S = 300;

/** Epoch seconds (float) of the deadline, or null when the config disables it (null, 0, negative, non-numeric). */
export function computeDeadline(config: Readonly<Record<string, unknown>>, nowMs: number): number | null {
  const raw = config.timeout === undefined ? DEFAULT_RUN_TIMEOUT_S : config.timeout;
  const t = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
  if (!Number.isFinite(t) || t <= 0) return null;
  return nowMs / 1000 + t;
}
