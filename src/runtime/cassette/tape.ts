// Builds the per-run tapes of a `lbot run` from the host observer: calls, deliveries, notices and outcomes.
import type { HostObserver } from '../../core/host/observer.js';
import { deliveredEntry, observedEntry, tapeResults } from '../../core/cassette/results.js';
import type { TapeAnswer, TapeCall, TapeResults } from '../../core/cassette/schema.js';
import { stableValue } from '../../core/cassette/normalize.js';
import { isRecord } from '../../core/json.js';

export type LiveTape = {
  index: number;
  run_id: string;
  event_id: string;
  event_type: string;
  runner_id: string;
  calls: TapeCall[];
  answers: TapeAnswer[];
  delivered: Record<string, unknown>[];
  observed: Record<string, unknown>[];
  results: TapeResults | null;
};

/** Tapes by run, in the order runs were first seen (`lbot run` runs its events one after another). */
export class TapeLog {
  readonly tapes: LiveTape[] = [];
  readonly #byRun = new Map<string, LiveTape>();
  #seq = 0;

  /** The tape of `run_id`, opened on first sight (the tool table is built before the run starts). */
  tape(run_id: string): LiveTape {
    let tape = this.#byRun.get(run_id);
    if (!tape) {
      tape = {
        index: this.tapes.length,
        run_id,
        event_id: '',
        event_type: '',
        runner_id: '',
        calls: [],
        answers: [],
        delivered: [],
        observed: [],
        results: null,
      };
      this.#byRun.set(run_id, tape);
      this.tapes.push(tape);
    }
    return tape;
  }

  /** The run in flight: model calls carry no run id, and runs do not overlap under `lbot run`. */
  current(): LiveTape | undefined {
    return this.tapes.at(-1);
  }

  /** Records every run start, call, delivery, notice and end. */
  observer(): HostObserver {
    return {
      onRunStarted: (run) => Object.assign(this.tape(run.run_id), { event_id: run.event_id, event_type: run.event_type, runner_id: run.runner_id }),
      onProxyCall: (rec) => {
        const known = this.#byRun.get(rec.run_id) ?? this.current();
        if (!known) return;
        const params = stableValue(rec.params);
        known.calls.push({
          seq: this.#seq++,
          action: rec.action,
          params: isRecord(params) ? params : {},
          outcome: rec.outcome.ok ? { ok: true, result: stableValue(rec.outcome.result) } : rec.outcome,
        });
      },
      onDelivered: (item) => this.tape(item.run_id).delivered.push(deliveredEntry(item)),
      onObserved: (run_id, notice) => this.tape(run_id).observed.push(observedEntry(run_id, notice)),
      onRunEnded: (outcome) => {
        const tape = this.tape(outcome.run_id);
        tape.results = tapeResults(outcome, tape.delivered, tape.observed);
      },
    };
  }
}
