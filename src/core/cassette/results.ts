// Normalized run results of a cassette, and the readable difference between two sets of them.
import type { RunOutcome } from '../host/host.js';
import type { Delivered } from '../host/result-processor.js';
import type { ObservedNotice } from '../stores/types.js';
import { isRecord } from '../json.js';
import { lineDiff } from './diff.js';
import { stablePretty, stableValue } from './normalize.js';
import type { TapeResults, TapeRun } from './schema.js';

/** One delivered item without its run id. */
export function deliveredEntry(item: Delivered): Record<string, unknown> {
  const entry = item.type === 'message.delta' ? { type: item.type, chunk: item.chunk } : { type: item.type, message: item.message };
  const stable = stableValue(entry);
  return isRecord(stable) ? stable : {};
}

/** One observed notice without its time. */
export function observedEntry(notice: ObservedNotice): Record<string, unknown> {
  const stable = stableValue(notice);
  return isRecord(stable) ? stable : {};
}

/** The results of a finished run as the cassette stores them. */
export function tapeResults(outcome: RunOutcome, delivered: Record<string, unknown>[], observed: Record<string, unknown>[]): TapeResults {
  const message = outcome.error ? stableValue(outcome.error.message) : null;
  return {
    status: outcome.status,
    error: outcome.error ? { code: outcome.error.code, message: typeof message === 'string' ? message : outcome.error.message } : null,
    reply: outcome.reply,
    delivered,
    observed,
  };
}

/** Diff lines between the recorded runs and the replayed ones; empty when they are the same. */
export function compareRuns(recorded: readonly TapeRun[], replayed: readonly TapeResults[]): string[] {
  const out: string[] = [];
  const count = Math.max(recorded.length, replayed.length);
  for (let i = 0; i < count; i++) {
    const before = recorded[i];
    const after = replayed[i];
    const label = before ? `run ${i + 1} (event ${before.event_id})` : `run ${i + 1}`;
    if (!before) {
      out.push(`${label}: not in the cassette (it holds ${recorded.length} run(s))`);
      continue;
    }
    if (!after) {
      out.push(`${label}: recorded, but it did not run this time (an earlier run failed or the event file changed)`);
      continue;
    }
    const diff = lineDiff(stablePretty(before.results), stablePretty(after));
    if (diff.length > 0) out.push(`${label}: results changed`, ...diff.map((l) => `  ${l}`));
  }
  return out;
}
