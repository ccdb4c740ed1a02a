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

/** Hooks the host calls synchronously; implementations must not throw. */
export type HostObserver = {
  onRunStarted?(run: { run_id: string; runner_id: string; event_id: string; event_type: string }): void;
  onDelivered?(item: Delivered): void;
  onObserved?(run_id: string, notice: ObservedNotice): void;
  onProxyCall?(record: ProxyCallRecord): void;
  onRunEnded?(outcome: RunOutcome): void;
};
