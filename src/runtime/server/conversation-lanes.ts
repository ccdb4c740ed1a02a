// The run policy per conversation (docs/run-policy.md): one lane per (binding_id, conversation_id) holds the
// run that owns the conversation and the runs waiting their turn. Only bookkeeping: the run manager starts,
// cancels and ends the runs these decisions name.
import { LbotError } from '../../core/errors.js';
import type { Binding, RunPolicy } from '../../core/protocol/binding.js';
import type { EventEnvelope } from '../../core/protocol/event.js';

export type LaneRun = { readonly run_id: string };

/** What to do with a new run: start it now or let it wait; which runs it cancels (interrupt). */
export type Admission<T extends LaneRun> = {
  start: boolean;
  /** The run it waits behind (the lane's holder or the last waiting run). */
  behind: string | null;
  /** The running run to cancel (interrupt). */
  interrupt: T | null;
  /** Waiting runs that will never start (interrupt: the newest event wins). */
  superseded: T[];
};

type Lane<T> = { binding_id: string; conversation_id: string; holder: T | null; waiting: T[] };

export type LaneId = { key: string; binding_id: string; conversation_id: string };

/** The lane of a run: events without a conversation and parallel bindings have none. */
export function laneOf(binding: Pick<Binding, 'binding_id' | 'run_policy'>, event: Pick<EventEnvelope, 'conversation_id'>): LaneId | null {
  if (binding.run_policy === 'parallel' || !event.conversation_id) return null;
  return { key: JSON.stringify([binding.binding_id, event.conversation_id]), binding_id: binding.binding_id, conversation_id: event.conversation_id };
}

type LaneNames = { binding_id: string; conversation_id: string };

/** run_policy reject while `holder` runs: the same refusal in one process and through the queue. */
export function conversationBusy(lane: LaneNames, holder: string): LbotError {
  return new LbotError(
    'run.conversation_busy',
    `binding ${lane.binding_id} refuses a new event for conversation ${lane.conversation_id}: run ${holder} is still going (run_policy reject)`,
    {
      retryable: true,
      details: { binding_id: lane.binding_id, conversation_id: lane.conversation_id, run_id: holder },
      hint: 'send the event again once that run has ended, or set the binding run_policy to enqueue',
    },
  );
}

/** run_policy enqueue with serve.max_queued_per_conversation runs already waiting. */
export function conversationFull(lane: LaneNames, queued: number, limit: number, holder: string): LbotError {
  return new LbotError(
    'rate_limited',
    `conversation ${lane.conversation_id} of binding ${lane.binding_id} already has ${queued} runs waiting behind run ${holder} (serve.max_queued_per_conversation ${limit}); retry later`,
    {
      retryable: true,
      details: { binding_id: lane.binding_id, conversation_id: lane.conversation_id, queued, limit: 'serve.max_queued_per_conversation' },
    },
  );
}

export class ConversationLanes<T extends LaneRun> {
  readonly #lanes = new Map<string, Lane<T>>();
  /** Waiting run id → its lane key. */
  readonly #waitingIn = new Map<string, string>();

  constructor(private readonly maxQueued: () => number) {}

  /**
   * Admits `run` into the lane of `key` under `policy`, or throws: `run.conversation_busy` (reject while
   * held), `rate_limited` (the queue is full). `mayStart` is asked before a run takes a free lane and may
   * throw (the server's concurrency limits); a waiting run takes the slot its predecessor frees.
   */
  admit(id: LaneId, policy: RunPolicy, run: T, mayStart: () => void): Admission<T> {
    const key = id.key;
    const lane = this.#lanes.get(key) ?? { binding_id: id.binding_id, conversation_id: id.conversation_id, holder: null, waiting: [] };
    if (!lane.holder) {
      mayStart();
      lane.holder = run;
      this.#lanes.set(key, lane);
      return { start: true, behind: null, interrupt: null, superseded: [] };
    }
    const holder = lane.holder;
    if (policy === 'reject') {
      throw conversationBusy(lane, holder.run_id);
    }
    if (policy === 'interrupt') {
      const superseded = lane.waiting.splice(0);
      for (const s of superseded) this.#waitingIn.delete(s.run_id);
      this.#wait(key, lane, run);
      return { start: false, behind: holder.run_id, interrupt: holder, superseded };
    }
    const limit = this.maxQueued();
    if (lane.waiting.length >= limit) {
      throw conversationFull(lane, lane.waiting.length, limit, holder.run_id);
    }
    const behind = lane.waiting.at(-1)?.run_id ?? holder.run_id;
    this.#wait(key, lane, run);
    return { start: false, behind, interrupt: null, superseded: [] };
  }

  /** The holder of `key` ended: the next waiting run now holds the lane (returned, to be started). */
  release(key: string, run: T): T | undefined {
    const lane = this.#lanes.get(key);
    if (!lane || lane.holder !== run) return undefined;
    const next = lane.waiting.shift();
    if (!next) {
      this.#lanes.delete(key);
      return undefined;
    }
    this.#waitingIn.delete(next.run_id);
    lane.holder = next;
    return next;
  }

  /** Where a waiting run stands: the run ahead of it and its 1-based place in the queue. */
  position(run_id: string): { ahead: string; position: number } | undefined {
    const lane = this.#laneOfWaiting(run_id);
    if (!lane?.holder) return undefined;
    const i = lane.waiting.findIndex((r) => r.run_id === run_id);
    return { ahead: i === 0 ? lane.holder.run_id : (lane.waiting[i - 1]?.run_id ?? lane.holder.run_id), position: i + 1 };
  }

  /** Takes a waiting run out of its queue (cancelled before it started); undefined when it is not waiting. */
  remove(run_id: string): T | undefined {
    const lane = this.#laneOfWaiting(run_id);
    if (!lane) return undefined;
    const i = lane.waiting.findIndex((r) => r.run_id === run_id);
    this.#waitingIn.delete(run_id);
    return i < 0 ? undefined : lane.waiting.splice(i, 1)[0];
  }

  /** Every waiting run, taken out of the queues (shutdown). */
  drain(): T[] {
    const all = [...this.#lanes.values()].flatMap((l) => l.waiting.splice(0));
    this.#waitingIn.clear();
    return all;
  }

  get waitingCount(): number {
    return this.#waitingIn.size;
  }

  #wait(key: string, lane: Lane<T>, run: T): void {
    lane.waiting.push(run);
    this.#waitingIn.set(run.run_id, key);
  }

  #laneOfWaiting(run_id: string): Lane<T> | undefined {
    const key = this.#waitingIn.get(run_id);
    return key === undefined ? undefined : this.#lanes.get(key);
  }
}
