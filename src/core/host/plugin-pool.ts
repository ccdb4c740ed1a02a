// The host's plugin processes: one warm process per plugin identity, binding env and network grant, started on first
// use, replaced when it dies (with crash-loop backoff), swapped on reload, and drained before it stops.
import { LbotError } from '../errors.js';
import type { PluginProcessEvent } from './observer.js';
import type { Clock, PluginConnection, PluginLauncher, PluginSpec, ProxyCallHandler, RunnerCatalog } from './ports.js';

/** Crash-loop guard: at most `starts` starts of one plugin and env per `window_ms` (AC-200; `plugins.restart_limit`). */
export type RestartLimit = { starts: number; window_ms: number };
const DEFAULT_RESTART_LIMIT: RestartLimit = { starts: 5, window_ms: 10_000 };

export type PluginPoolDeps = {
  launcher: PluginLauncher;
  clock: Clock;
  warn(message: string): void;
  /** Where the processes' proxy calls go. */
  onApiCall: ProxyCallHandler;
  restartLimit?: RestartLimit;
  /** Sees every process start and exit (the operator log). */
  onProcess?(event: PluginProcessEvent): void;
};

/** A run's hold on a process: the process is not stopped by a reload before every lease is released. */
export type Lease = { connection: Promise<PluginConnection>; release(): void };

/** One started process of a plugin and env, and the runs holding it. */
class Generation {
  #leases = 0;
  #idle: Array<() => void> = [];
  #started: PluginConnection | null = null;

  constructor(
    readonly identity: string,
    readonly env: Readonly<Record<string, string>>,
    readonly network: boolean,
    readonly connection: Promise<PluginConnection>,
  ) {
    connection.then(
      (conn) => (this.#started = conn),
      () => undefined,
    );
  }

  /** A process that failed or is stopping takes no new run, even before it has exited. */
  get spent(): boolean {
    return this.#started !== null && !this.#started.accepting;
  }

  lease(): Lease {
    this.#leases++;
    let released = false;
    return {
      connection: this.connection,
      release: () => {
        if (released) return;
        released = true;
        if (--this.#leases === 0) for (const resolve of this.#idle.splice(0)) resolve();
      },
    };
  }

  /** Resolves once no run holds this process. */
  idle(): Promise<void> {
    return this.#leases === 0 ? Promise.resolve() : new Promise((resolve) => this.#idle.push(resolve));
  }
}

/** The pool key of a plugin, env and network grant (another grant is another process); only ever compared. */
const keyOf = (identity: string, env: Readonly<Record<string, string>>, network: boolean) => `${identity}\0${JSON.stringify(env)}${network ? '\0network' : ''}`;

/** What a binding starts of a catalog plugin: its env, and the manifest's network grant unless the binding takes it away (never adds one). */
export function pluginSpecFor(
  plugin: Omit<PluginSpec, 'env'>,
  binding: { env: Record<string, string>; network?: boolean | undefined },
): PluginSpec & { network: boolean } {
  return { ...plugin, env: { ...binding.env }, network: plugin.network === true && binding.network !== false };
}

export class PluginPool {
  readonly #live = new Map<string, Generation>();
  readonly #startTimes = new Map<string, number[]>();
  /** Keys whose last process ended with a failure: their next start is a restart. */
  readonly #failed = new Set<string>();

  constructor(private readonly deps: PluginPoolDeps) {}

  /** The warm process of the plugin and the binding's env (started now when there is none), leased to one run. */
  acquire(catalog: RunnerCatalog, identity: string, binding: { env: Record<string, string>; network?: boolean | undefined }): Lease {
    const plugin = catalog.plugins.get(identity);
    if (!plugin) return { connection: Promise.reject(new LbotError('runner.not_found', `plugin ${identity} not found`)), release: () => undefined };
    const { env, network } = pluginSpecFor(plugin, binding);
    const key = keyOf(identity, env, network);
    const existing = this.#live.get(key);
    if (existing && !existing.spent) return existing.lease();
    const started = this.#startSlot(key, identity).then(() => this.#start(plugin, env, network));
    const generation = this.#install(key, identity, env, network, started);
    started.catch(() => this.#live.get(key) === generation && this.#live.delete(key));
    return generation.lease();
  }

  /**
   * Starts a fresh process for every env of the plugin (the default env when it has none yet) and routes
   * new runs to it; the old process finishes its runs, then stops. A failed start throws and leaves the
   * old process serving.
   */
  async reload(identity: string, plugin: Omit<PluginSpec, 'env'>): Promise<void> {
    const current = [...this.#live.entries()].filter(([, g]) => g.identity === identity);
    const granted = plugin.network === true;
    const targets = current.length > 0 ? current : [[keyOf(identity, {}, granted), undefined] as const];
    for (const [key, old] of targets) {
      const env = old?.env ?? {};
      const network = old?.network ?? granted;
      const fresh = this.#start(plugin, env, network);
      await fresh; // throws: the old process keeps serving
      this.#install(key, identity, env, network, fresh);
      if (old) void this.#retire(old).catch((err: unknown) => this.deps.warn(`stopping the old ${identity} process failed: ${String(err)}`));
    }
  }

  /** Stops every process. */
  async close(): Promise<void> {
    const all = [...this.#live.values()];
    this.#live.clear();
    await Promise.allSettled(all.map(async (g) => (await g.connection).close()));
  }

  #start(plugin: Omit<PluginSpec, 'env'>, env: Readonly<Record<string, string>>, network: boolean): Promise<PluginConnection> {
    return this.deps.launcher.start({ ...plugin, env: { ...env }, network }, this.deps.onApiCall);
  }

  /** Makes `connection` the live process of `key`; it leaves the pool when it exits. */
  #install(key: string, identity: string, env: Readonly<Record<string, string>>, network: boolean, connection: Promise<PluginConnection>): Generation {
    const generation = new Generation(identity, env, network, connection);
    this.#live.set(key, generation);
    connection.then(
      (conn) => {
        const restart = this.#failed.delete(key);
        this.deps.onProcess?.({ kind: 'started', plugin: identity, pgid: conn.pgid, restart });
        void conn.exited.then((failure) => {
          if (failure) this.#failed.add(key);
          this.deps.onProcess?.({
            kind: 'exited',
            plugin: identity,
            pgid: conn.pgid,
            failure: failure ? { code: failure.code, message: failure.message } : null,
          });
          if (this.#live.get(key) === generation) this.#live.delete(key);
        });
      },
      () => undefined,
    );
    return generation;
  }

  /** Stops a replaced process once no run holds it (or at once when it already exited). */
  async #retire(old: Generation): Promise<void> {
    const conn = await old.connection.catch(() => null);
    if (!conn) return;
    await Promise.race([old.idle(), conn.exited]);
    await conn.close();
  }

  /** Waits until one more start of `key` stays within the restart limit (crash-loop backoff). */
  async #startSlot(key: string, identity: string): Promise<void> {
    const { starts, window_ms } = this.deps.restartLimit ?? DEFAULT_RESTART_LIMIT;
    const now = this.deps.clock.now();
    const recent = (this.#startTimes.get(key) ?? []).filter((t) => now - t < window_ms);
    const oldest = recent[0];
    if (recent.length >= starts && oldest !== undefined) {
      const wait = window_ms - (now - oldest);
      this.deps.warn(`plugin ${identity} restarted ${recent.length} times in ${window_ms / 1000}s; backing off ${Math.ceil(wait)} ms`);
      await new Promise<void>((resolve) => this.deps.clock.after(wait, resolve));
      recent.shift();
    }
    recent.push(this.deps.clock.now());
    this.#startTimes.set(key, recent);
  }
}
