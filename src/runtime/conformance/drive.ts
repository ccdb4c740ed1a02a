// Drives one probe run through the conformance host and collects what the host and the connection saw.
import type { Binding } from '../../core/protocol/binding.js';
import type { EventEnvelope } from '../../core/protocol/event.js';
import type { Host } from '../../core/host/host.js';
import type { ProbeRun } from '../../core/conformance/evidence.js';
import type { HostStores } from '../stores/open.js';
import type { ConnectionWatch } from './instrument.js';

export type ProbeContext = {
  host: Host;
  stores: HostStores;
  watch: ConnectionWatch;
  runnerConfig: Record<string, unknown>;
  probeTimeoutS: number;
  maxDataBytes: number;
};

export type DriveRequest = {
  event: EventEnvelope;
  binding: Binding;
  deadlineS: number;
  /** Cancel the run this many ms after it starts, or at its first result, whichever comes first. */
  cancelAfterMs?: number | undefined;
};

/** Runs one probe; rejects only when the run could not be started at all (bad config, unknown runner). */
export async function driveRun(p: ProbeContext, req: DriveRequest): Promise<Omit<ProbeRun, 'probe'>> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const outcome = await p.host.run({
    event: req.event,
    binding: req.binding,
    signal: abort.signal,
    onStarted: (run_id) => {
      if (req.cancelAfterMs === undefined) return;
      timer = setTimeout(() => abort.abort(), req.cancelAfterMs);
      p.watch.onResult(run_id, () => abort.abort());
    },
  });
  clearTimeout(timer);
  const trace = p.watch.trace(outcome.run_id);
  const record = await p.stores.runs.get(outcome.run_id);
  return {
    runner_id: req.binding.runner_id,
    run_id: outcome.run_id,
    status: outcome.status,
    error: outcome.error ? { code: outcome.error.code, message: outcome.error.message } : null,
    results: trace.results,
    reply: trace.reply,
    cancelSent: trace.cancelAt !== null,
    cancelToReplyMs: trace.cancelAt !== null && trace.repliedAt !== null ? trace.repliedAt - trace.cancelAt : null,
    killed: trace.killed,
    channel: trace.channel,
    api: record?.api_calls ?? [],
    warnings: record?.warnings ?? [],
    deadlineS: req.deadlineS,
  };
}
