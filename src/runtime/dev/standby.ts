// The plugin launcher of `lbot dev`: keeps one spawned, not yet initialized process per node plugin on
// standby, so a reload only pays for importing the edited module, not for starting node and the SDK.
import { performance } from 'node:perf_hooks';
import { builtEntry } from '../../package-root.js';
import type { PluginConnection, PluginLauncher, PluginSpec, ProxyCallHandler } from '../../core/host/ports.js';
import type { PreparedPlugin, PreparingLauncher } from '../plugins/launcher.js';

/** The bootstrap standby processes run (imports the runner module on the first protocol line); always the build in dist/. */
export const LAZY_BOOTSTRAP = builtEntry('runtime/dev/lazy-bootstrap');

/** Lets the new process have the CPU for its first runs before the next standby starts. */
const REFILL_DELAY_MS = 250;

/** Standbys serve only `execution.node` plugins: a command plugin loads its code when it starts. */
function standbyKey(spec: PluginSpec): string | null {
  return 'node' in spec.execution ? JSON.stringify([spec.identity, spec.dir, spec.execution, spec.env]) : null;
}

export class StandbyLauncher implements PluginLauncher {
  readonly #base: PreparingLauncher;
  readonly #standby = new Map<string, PreparedPlugin>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed = false;
  /** How the last start went, for the dev dashboard and the benchmark. */
  lastStart: { standby: boolean; ms: number } | null = null;

  constructor(base: PreparingLauncher) {
    this.#base = base;
  }

  async start(spec: PluginSpec, onApiCall: ProxyCallHandler, opts: { signal?: AbortSignal } = {}): Promise<PluginConnection> {
    const key = standbyKey(spec);
    if (!key) return this.#base.start(spec, onApiCall, opts);
    opts.signal?.throwIfAborted();
    const t0 = performance.now();
    const standby = this.#take(key);
    const prepared = standby ?? this.#base.prepare(spec, onApiCall);
    try {
      const conn = await prepared.initialize(opts);
      this.lastStart = { standby: standby !== undefined, ms: performance.now() - t0 };
      return conn;
    } finally {
      this.#refillLater(key, spec, onApiCall);
    }
  }

  /** Standby processes alive now (tests). */
  standbyCount(): number {
    return [...this.#standby.values()].filter((p) => p.connection.exitStatus === null).length;
  }

  /** Stops every standby process. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    const all = [...this.#standby.values()];
    this.#standby.clear();
    await Promise.allSettled(all.map((p) => p.connection.kill()));
  }

  #take(key: string): PreparedPlugin | undefined {
    const p = this.#standby.get(key);
    this.#standby.delete(key);
    if (p && (p.connection.exitStatus !== null || p.connection.failure !== null)) return undefined;
    return p;
  }

  #refillLater(key: string, spec: PluginSpec, onApiCall: ProxyCallHandler): void {
    if (this.#closed || this.#standby.has(key)) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (this.#closed || this.#standby.has(key)) return;
      const p = this.#base.prepare(spec, onApiCall);
      this.#standby.set(key, p);
      void p.connection.exited.then(() => {
        if (this.#standby.get(key) === p) this.#standby.delete(key);
      });
    }, REFILL_DELAY_MS);
    timer.unref();
    this.#timers.add(timer);
  }
}
