// Runs started over HTTP: concurrency limits, cancel handles, and the live result stream of each run.
import { EventEmitter } from 'node:events';
import { LbotError } from '../../core/errors.js';
import type { Host, RunOutcome, RunRequest } from '../../core/host/host.js';
import { runErrorOf, type Delivered } from '../../core/host/result-processor.js';
import { parseRunnerId, pluginIdentity } from '../../core/protocol/runner-id.js';
import type { ObservedNotice } from '../../core/stores/types.js';
import { ConversationLanes, laneOf, type Admission, type LaneId } from './conversation-lanes.js';

/** serve.max_queued_per_conversation's default (core/config.ts). */
const DEFAULT_MAX_QUEUED = 16;

/** One line of a run's result stream (NDJSON / SSE). */
export type StreamItem =
  ({ kind: 'delivered' } & Delivered) | { kind: 'observed'; run_id: string; notice: ObservedNotice } | { kind: 'summary'; outcome: RunOutcome };

import type { RunGateway, StartRequest } from './run-gateway.js';
import { timeOrderedId } from '../../core/time-ordered-id.js';

/** A run the server answered an id for: waiting its turn in its conversation's lane, then running. */
type LiveRun = {
  run_id: string;
  req: StartRequest;
  plugin: string;
  lane: LaneId | null;
  /** queued: waiting its turn; starting: given to the host, not yet recorded; running: recorded. */
  state: 'queued' | 'starting' | 'running';
  queued_at: number;
  abort: AbortController;
  items: StreamItem[];
  events: EventEmitter;
  done: Promise<RunOutcome>;
  end(outcome: RunOutcome): void;
};

/** What GET /v1/runs/:id answers for a run still waiting its turn (it has no record yet). */
export type QueuedRunView = {
  run_id: string;
  status: 'queued';
  runner_id: string;
  binding_id: string;
  event_id: string;
  conversation_id: string | null;
  queued_at: number;
  /** The run ahead of it and its 1-based place; null once its turn has come and it is being set up. */
  queue: { ahead: string; position: number } | null;
};

export type RunManagerLimits = {
  maxConcurrent: number;
  maxPerPlugin: number;
  /** Runs of one (binding, conversation) waiting behind its running one (run_policy enqueue). */
  maxQueuedPerConversation?: number;
};

/** Sees what every run delivers (the platform reply router). */
export type RunDeliveryObserver = {
  /** The run is registered (before it delivers anything). */
  started?(req: Pick<RunRequest, 'event' | 'binding' | 'raw'>, run_id: string): void;
  delivered(req: Pick<RunRequest, 'event' | 'binding' | 'raw'>, item: Delivered): void;
  ended(run_id: string): void;
};

export class RunManager implements RunGateway {
  readonly #live = new Map<string, LiveRun>();
  #pending = 0;
  readonly #pendingByPlugin = new Map<string, number>();
  readonly #lanes: ConversationLanes<LiveRun>;
  #closing = false;

  constructor(
    private readonly host: Host,
    private readonly limits: RunManagerLimits,
    private readonly warn: (m: string) => void,
    private readonly observer?: RunDeliveryObserver,
  ) {
    this.#lanes = new ConversationLanes(() => limits.maxQueuedPerConversation ?? DEFAULT_MAX_QUEUED);
  }

  /** Runs in flight (queued runs are not: they hold no slot until they start). */
  get activeCount(): number {
    return this.#pending;
  }

  get queuedCount(): number {
    return this.#lanes.waitingCount;
  }

  /**
   * Admits a run under its binding's run_policy and resolves with its id: once it is registered when it
   * starts at once (or rejects with the pre-run error), at once when it waits its turn.
   */
  start(req: StartRequest): Promise<string> {
    if (this.#closing) return Promise.reject(new LbotError('cancelled', 'the server is shutting down'));
    const run = this.#newRun(req);
    const mayStart = () => this.#checkLimits(run.plugin);
    let admission: Admission<LiveRun>;
    try {
      if (!run.lane) mayStart();
      admission = run.lane
        ? this.#lanes.admit(run.lane, req.binding.run_policy, run, mayStart)
        : { start: true, behind: null, interrupt: null, superseded: [] };
    } catch (err) {
      return Promise.reject(err);
    }
    for (const s of admission.superseded)
      this.#endUnstarted(
        s,
        `superseded by run ${run.run_id}: a newer event arrived for conversation ${run.lane?.conversation_id ?? ''} (run_policy interrupt)`,
        { superseded_by: run.run_id },
      );
    if (admission.interrupt) {
      const reason = `interrupted by run ${run.run_id}: a newer event arrived for conversation ${run.lane?.conversation_id ?? ''} (run_policy interrupt)`;
      admission.interrupt.abort.abort(new LbotError('cancelled', reason, { details: { interrupted_by: run.run_id } }));
    }
    if (admission.start) return this.#launch(run);
    this.#live.set(run.run_id, run);
    return Promise.resolve(run.run_id);
  }

  #newRun(req: StartRequest): LiveRun {
    const parts = parseRunnerId(req.binding.runner_id);
    let end!: (outcome: RunOutcome) => void;
    const done = new Promise<RunOutcome>((resolve) => (end = resolve));
    return {
      run_id: timeOrderedId(),
      req,
      plugin: parts ? pluginIdentity(parts) : req.binding.runner_id,
      lane: laneOf(req.binding, req.event),
      state: 'queued',
      queued_at: Date.now() / 1000,
      abort: new AbortController(),
      items: [],
      events: new EventEmitter(),
      done,
      end,
    };
  }

  #checkLimits(plugin: string): void {
    const perPlugin = this.#pendingByPlugin.get(plugin) ?? 0;
    if (this.#pending < this.limits.maxConcurrent && perPlugin < this.limits.maxPerPlugin) return;
    const which =
      this.#pending >= this.limits.maxConcurrent
        ? `${this.limits.maxConcurrent} runs in flight`
        : `${this.limits.maxPerPlugin} runs in flight for plugin ${plugin}`;
    throw new LbotError('rate_limited', `too many concurrent runs (${which}); retry later`, { retryable: true, details: { limit: which } });
  }

  #push(run: LiveRun, item: StreamItem): void {
    run.items.push(item);
    run.events.emit('item', item);
  }

  /** Runs it on the host; resolves with the id once the run is registered, rejects with a pre-run error. */
  #launch(run: LiveRun): Promise<string> {
    const { req, plugin } = run;
    run.state = 'starting';
    this.#pending++;
    this.#pendingByPlugin.set(plugin, (this.#pendingByPlugin.get(plugin) ?? 0) + 1);
    let started = false;
    return new Promise<string>((resolve, reject) => {
      this.host
        .run({
          ...req,
          run_id: run.run_id,
          signal: run.abort.signal,
          onStarted: (run_id) => {
            started = true;
            run.state = 'running';
            this.#live.set(run_id, run);
            this.observer?.started?.(req, run_id);
            resolve(run_id);
          },
          onDelivered: (item) => {
            this.observer?.delivered(req, item);
            if (started) this.#push(run, { kind: 'delivered', ...item });
          },
          onObserved: (run_id, notice) => {
            if (started) this.#push(run, { kind: 'observed', run_id, notice });
          },
        })
        .then((outcome) => this.#finish(run, outcome))
        .catch((err: unknown) => {
          if (!started) reject(err);
          else this.warn(`run ${run.run_id} ended with an internal error: ${err instanceof Error ? err.message : String(err)}`);
          this.#finish(run, this.#outcomeOf(run, 'failed', runErrorOf(err)));
        })
        .finally(() => {
          this.#pending--;
          this.#pendingByPlugin.set(plugin, (this.#pendingByPlugin.get(plugin) ?? 1) - 1);
          this.#live.delete(run.run_id);
          if (started) this.observer?.ended(run.run_id);
          this.#next(run);
        });
    });
  }

  /** The lane's next run starts in the slot this one freed (a queued run already has its id answered). */
  #next(run: LiveRun): void {
    if (!run.lane) return;
    const next = this.#lanes.release(run.lane.key, run);
    if (!next) return;
    if (this.#closing) {
      this.#endUnstarted(next, 'the server shut down before the run started');
      return;
    }
    // Its pre-run error (a runner removed meanwhile) ends it on its stream: the caller has its id already.
    this.#launch(next).catch(() => undefined);
  }

  #finish(run: LiveRun, outcome: RunOutcome): void {
    this.#push(run, { kind: 'summary', outcome });
    run.events.emit('end');
    run.end(outcome);
  }

  #outcomeOf(run: LiveRun, status: RunOutcome['status'], error: RunOutcome['error']): RunOutcome {
    const { binding, event } = run.req;
    return { run_id: run.run_id, runner_id: binding.runner_id, binding_id: binding.binding_id, event_id: event.event_id, status, error, reply: null };
  }

  /** Ends a run that never started (cancelled, superseded, shutdown): nothing ran and nothing is recorded. */
  #endUnstarted(run: LiveRun, message: string, details: Record<string, unknown> = {}): void {
    this.#live.delete(run.run_id);
    this.#finish(run, this.#outcomeOf(run, 'cancelled', { code: 'cancelled', message, retryable: false, details: { never_started: true, ...details } }));
  }

  /** The live run (queued or in flight). */
  get(run_id: string): { items: readonly StreamItem[]; events: EventEmitter } | undefined {
    return this.#live.get(run_id);
  }

  /** A run not recorded yet (waiting its turn), as GET /v1/runs/:id shows it; undefined once it is recorded. */
  queued(run_id: string): QueuedRunView | undefined {
    const run = this.#live.get(run_id);
    if (!run || run.state === 'running') return undefined;
    const queue = run.state === 'queued' ? (this.#lanes.position(run_id) ?? null) : null;
    const { binding, event } = run.req;
    return {
      run_id,
      status: 'queued',
      runner_id: binding.runner_id,
      binding_id: binding.binding_id,
      event_id: event.event_id,
      conversation_id: event.conversation_id,
      queued_at: run.queued_at,
      queue,
    };
  }

  /** The outcome of a live run, once it ends (undefined when it is neither queued nor in flight). */
  outcome(run_id: string): Promise<RunOutcome> | undefined {
    return this.#live.get(run_id)?.done;
  }

  /** Cancels a live run (a queued one never starts); false when it is neither queued nor in flight. */
  cancel(run_id: string): boolean {
    const live = this.#live.get(run_id);
    if (!live) return false;
    if (live.state === 'queued' && this.#lanes.remove(run_id)) this.#endUnstarted(live, 'the run was cancelled before it started');
    else live.abort.abort();
    return true;
  }

  /** Runs of this process stream live (get); a run of another process is followed by reading its record. */
  changed(_run_id: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, timeoutMs).unref());
  }

  /** Stops accepting runs, ends queued runs unstarted, cancels every run in flight and waits for them to end. */
  async close(): Promise<void> {
    this.#closing = true;
    for (const q of this.#lanes.drain()) this.#endUnstarted(q, 'the server shut down before the run started');
    const all = [...this.#live.values()];
    for (const r of all) r.abort.abort();
    await Promise.allSettled(all.map((r) => r.done));
  }
}
