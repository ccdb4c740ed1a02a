// A passive listener of everything the host does for runs: starts, deliveries, notices, proxy calls and ends.
import type { AgentApiError } from '../protocol/proxy.js';
import type { ObservedNotice } from '../stores/types.js';
import type { RunOutcome } from './run-outcome.js';
import type { Delivered } from './result-processor.js';

/** One plugin → host proxy call after it was answered, in the order the answers went out. */
export type ProxyCallRecord = {
  /** The run id the caller claimed (may be foreign or unknown). */
  run_id: string;
  caller_plugin: string;
  action: string;
  params: Record<string, unknown>;
  outcome: { ok: true; result: unknown } | { ok: false; error: AgentApiError };
};

/**
 * A runner plugin process started (`restart` when the previous process of the same plugin and env ended
 * with a failure) or exited (`failure` null after an orderly stop).
 */
export type PluginProcessEvent =
  | { kind: 'started'; plugin: string; pgid: number | null; restart: boolean }
  | { kind: 'exited'; plugin: string; pgid: number | null; failure: { code: string; message: string } | null };

/** Hooks the host calls synchronously; implementations must not throw. */
export type HostObserver = {
  onRunStarted?(run: { run_id: string; runner_id: string; event_id: string; event_type: string }): void;
  onDelivered?(item: Delivered): void;
  onObserved?(run_id: string, notice: ObservedNotice): void;
  onProxyCall?(record: ProxyCallRecord): void;
  onRunEnded?(outcome: RunOutcome): void;
  onPluginProcess?(event: PluginProcessEvent): void;
};

/** One observer that calls each of `observers` in turn (the dev dashboard and the operator log side by side). */
export function combineObservers(...observers: ReadonlyArray<HostObserver | undefined>): HostObserver {
  const all = observers.filter((o): o is HostObserver => o !== undefined);
  return {
    onRunStarted: (run) => all.forEach((o) => o.onRunStarted?.(run)),
    onDelivered: (item) => all.forEach((o) => o.onDelivered?.(item)),
    onObserved: (run_id, notice) => all.forEach((o) => o.onObserved?.(run_id, notice)),
    onProxyCall: (record) => all.forEach((o) => o.onProxyCall?.(record)),
    onRunEnded: (outcome) => all.forEach((o) => o.onRunEnded?.(outcome)),
    onPluginProcess: (event) => all.forEach((o) => o.onPluginProcess?.(event)),
  };
}
