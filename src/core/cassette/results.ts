// Normalized run results of a cassette, and the readable difference between two sets of them. The
// delivered items and observed notices are stored as result-stream lines (core/protocol/result-line.ts)
// without their run id and times, so a cassette reads like `lbot run --json`.
import type { RunOutcome } from '../host/host.js';
import type { Delivered } from '../host/result-processor.js';
import type { ObservedNotice } from '../stores/types.js';
import { isRecord } from '../json.js';
import { deliveredLine, observedLine } from '../protocol/result-line.js';
import { lineDiff } from './diff.js';
import { stablePretty, stableValue } from './normalize.js';
import type { TapeResults, TapeRun } from './schema.js';

function stableRecord(value: unknown): Record<string, unknown> {
  const stable = stableValue(value);
  return isRecord(stable) ? stable : {};
}

/** One delivered item as its result line, without its run id. */
export function deliveredEntry(item: Delivered): Record<string, unknown> {
  return stableRecord(deliveredLine(item));
}

/** One observed notice as its result line, without its run id and time. */
export function observedEntry(run_id: string, notice: ObservedNotice): Record<string, unknown> {
  return stableRecord(observedLine(run_id, notice));
}

/**
 * A stored entry as a result line. Cassettes recorded before the entries were result lines held a
 * delivered item as `{type, chunk|message}` and a notice as it was stored; they read as the same lines,
 * so replaying them compares equal.
 */
export function storedEntry(entry: Record<string, unknown>): Record<string, unknown> {
  if ('data' in entry && (entry.type === 'message.delta' || entry.type === 'message.completed' || entry.observed === true)) return entry;
  if (entry.type === 'message.delta' && 'chunk' in entry) return stableRecord({ type: entry.type, data: { chunk: entry.chunk } });
  if (entry.type === 'message.completed' && 'message' in entry) return stableRecord({ type: entry.type, data: { message: entry.message } });
  const data = isRecord(entry.data) ? entry.data : {};
  return stableRecord({ type: entry.type, data, observed: true, ...(entry.executed === false ? { executed: false } : {}) });
}

function storedResults(results: TapeResults): TapeResults {
  return { ...results, delivered: results.delivered.map(storedEntry), observed: results.observed.map(storedEntry) };
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

/**
 * Deltas carry the whole text so far, and how many of them a streamed reply yields depends on timing (a
 * newer one replaces those the host had not sent yet). A run of deltas is compared by its last one.
 */
export function coalesceDeltas(delivered: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const entry of delivered) {
    const last = out.at(-1);
    if (entry.type === 'message.delta' && last?.type === 'message.delta' && sequenceOf(entry) === sequenceOf(last)) out[out.length - 1] = entry;
    else out.push(entry);
  }
  return out;
}

function sequenceOf(entry: Record<string, unknown>): unknown {
  const data = isRecord(entry.data) ? entry.data : {};
  return isRecord(data.chunk) ? data.chunk.msg_sequence : undefined;
}

function comparable(results: TapeResults): TapeResults {
  const stored = storedResults(results);
  return { ...stored, delivered: coalesceDeltas(stored.delivered) };
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
    const diff = lineDiff(stablePretty(comparable(before.results)), stablePretty(comparable(after)));
    if (diff.length > 0) out.push(`${label}: results changed`, ...diff.map((l) => `  ${l}`));
  }
  return out;
}
