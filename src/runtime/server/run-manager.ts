// Runs started over HTTP: concurrency limits, cancel handles, and the live result stream of each run.
import { EventEmitter } from 'node:events';
import { LbotError } from '../../core/errors.js';
import type { Host, RunOutcome, RunRequest } from '../../core/host/host.js';
import type { Delivered } from '../../core/host/result-processor.js';
import { parseRunnerId, pluginIdentity } from '../../core/protocol/runner-id.js';
import type { ObservedNotice } from '../../core/stores/types.js';

/** One line of a run's result stream (NDJSON / SSE). */
export type StreamItem =
  ({ kind: 'delivered' } & Delivered) | { kind: 'observed'; run_id: string; notice: ObservedNotice } | { kind: 'summary'; outcome: RunOutcome };

type LiveRun = { run_id: string; plugin: string; abort: AbortController; items: StreamItem[]; events: EventEmitter; done: Promise<RunOutcome> };

export type RunManagerLimits = { maxConcurrent: number; maxPerPlugin: number };

/** Sees what every run delivers (the platform reply router). */
export type RunDeliveryObserver = {
  /** The run is registered (before it delivers anything). */
  started?(req: Pick<RunRequest, 'event' | 'binding' | 'raw'>, run_id: string): void;
  delivered(req: Pick<RunRequest, 'event' | 'binding' | 'raw'>, item: Delivered): void;
  ended(run_id: string): void;
};

export class RunManager {
  readonly #live = new Map<string, LiveRun>();
  #pending = 0;
  readonly #pendingByPlugin = new Map<string, number>();
  #closing = false;

  constructor(
    private readonly host: Host,
    private readonly limits: RunManagerLimits,
    private readonly warn: (m: string) => void,
    private readonly observer?: RunDeliveryObserver,
  ) {}

  get activeCount(): number {
    return this.#pending;
  }

  /** Starts a run and resolves with its id once it is registered (or rejects with the pre-run error). */
  start(req: Omit<RunRequest, 'signal' | 'onStarted' | 'onDelivered' | 'onObserved'>): Promise<string> {
    if (this.#closing) return Promise.reject(new LbotError('cancelled', 'the server is shutting down'));
    const parts = parseRunnerId(req.binding.runner_id);
    const plugin = parts ? pluginIdentity(parts) : req.binding.runner_id;
    const perPlugin = this.#pendingByPlugin.get(plugin) ?? 0;
    if (this.#pending >= this.limits.maxConcurrent || perPlugin >= this.limits.maxPerPlugin) {
      const which =
        this.#pending >= this.limits.maxConcurrent
          ? `${this.limits.maxConcurrent} runs in flight`
          : `${this.limits.maxPerPlugin} runs in flight for plugin ${plugin}`;
      return Promise.reject(new LbotError('rate_limited', `too many concurrent runs (${which}); retry later`, { retryable: true, details: { limit: which } }));
    }
    this.#pending++;
    this.#pendingByPlugin.set(plugin, perPlugin + 1);
    const abort = new AbortController();
    const events = new EventEmitter();
    let live: LiveRun | undefined;
    const push = (item: StreamItem) => {
      if (!live) return;
      live.items.push(item);
      events.emit('item', item);
    };
    return new Promise<string>((resolve, reject) => {
      const done = this.host.run({
        ...req,
        signal: abort.signal,
        onStarted: (run_id) => {
          live = { run_id, plugin, abort, items: [], events, done };
          this.#live.set(run_id, live);
          this.observer?.started?.(req, run_id);
          resolve(run_id);
        },
        onDelivered: (item) => {
          this.observer?.delivered(req, item);
          push({ kind: 'delivered', ...item });
        },
        onObserved: (run_id, notice) => push({ kind: 'observed', run_id, notice }),
      });
      done
        .then((outcome) => {
          push({ kind: 'summary', outcome });
          events.emit('end');
        })
        .catch((err: unknown) => {
          if (!live) reject(err);
          else this.warn(`run ${live.run_id} ended with an internal error: ${err instanceof Error ? err.message : String(err)}`);
          events.emit('end');
        })
        .finally(() => {
          this.#pending--;
          this.#pendingByPlugin.set(plugin, (this.#pendingByPlugin.get(plugin) ?? 1) - 1);
          if (live) {
            this.#live.delete(live.run_id);
            this.observer?.ended(live.run_id);
          }
        });
    });
  }

  /** The live run, if it is still in flight. */
  get(run_id: string): { items: readonly StreamItem[]; events: EventEmitter } | undefined {
    return this.#live.get(run_id);
  }

  /** The outcome of a live run, once it ends (undefined when it is not in flight). */
  outcome(run_id: string): Promise<RunOutcome> | undefined {
    return this.#live.get(run_id)?.done;
  }

  /** Cancels a live run; false when it is not in flight. */
  cancel(run_id: string): boolean {
    const live = this.#live.get(run_id);
    if (!live) return false;
    live.abort.abort();
    return true;
  }

  /** Stops accepting runs, cancels every run in flight and waits for them to end. */
  async close(): Promise<void> {
    this.#closing = true;
    const all = [...this.#live.values()];
    for (const r of all) r.abort.abort();
    await Promise.allSettled(all.map((r) => r.done));
  }
}
