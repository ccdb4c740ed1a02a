// The reload controller of `lbot dev`: one reload at a time, the latest change wins, and a broken edit
// (manifest, component YAML or code that fails to start) keeps the last good version serving.
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import type { Host } from '../../core/host/host.js';
import type { RunnerCatalog } from '../../core/host/ports.js';
import { catalogOf, judgePlugin, slotsOf, type PluginSlot } from '../../core/dev/served-catalog.js';
import type { DevEvent } from '../../core/dev/events.js';
import { toLbotError } from '../../core/errors.js';
import type { DevPluginState } from './dev-state.js';

export type ReloaderDeps = {
  /** A fresh discovery of the watched directory. */
  load(): Promise<RunnerCatalog>;
  emit(e: DevEvent): void;
  /** Called after every batch of reloads (persist the dev state). */
  onSettled(): void;
  /** Runs before a plugin's new version is started (rebuild a TypeScript runner); a throw is its reload error. */
  prepare?(slot: PluginSlot): Promise<void>;
};

export class Reloader {
  #slots: Map<string, PluginSlot>;
  #served: RunnerCatalog;
  readonly #info = new Map<string, DevPluginState>();
  readonly #dirty = new Set<string>();
  #everything = false;
  #host: Pick<Host, 'reload'> | null = null;
  #running: Promise<void> | null = null;
  #closed = false;

  constructor(
    private readonly deps: ReloaderDeps,
    initial: RunnerCatalog,
  ) {
    this.#slots = slotsOf(initial);
    this.#served = catalogOf(this.#slots);
    for (const slot of this.#slots.values())
      this.#info.set(slot.dir, { dir: slot.dir, identity: slot.identity, generation: 0, reloaded_at: null, reload_error: null });
  }

  /** What the host reads: the last good catalog. */
  catalog(): RunnerCatalog {
    return this.#served;
  }

  plugins(): DevPluginState[] {
    return [...this.#info.values()].sort((a, b) => a.dir.localeCompare(b.dir));
  }

  /** Binds the host and starts every plugin warm (a start failure is a reload error, not fatal). */
  async start(host: Pick<Host, 'reload'>): Promise<void> {
    this.#host = host;
    this.schedule('all');
    await this.idle();
  }

  /** Queues plugin directories (or everything) for a reload; runs after the reload in flight. */
  schedule(dirs: readonly string[] | 'all'): void {
    if (this.#closed) return;
    if (dirs === 'all') this.#everything = true;
    else for (const d of dirs) this.#dirty.add(path.resolve(d));
    this.#running ??= this.#drain().finally(() => (this.#running = null));
  }

  /** Resolves when no reload is queued or in flight. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  close(): void {
    this.#closed = true;
  }

  async #drain(): Promise<void> {
    while (!this.#closed && (this.#everything || this.#dirty.size > 0)) {
      const everything = this.#everything;
      const dirs = new Set(this.#dirty);
      this.#everything = false;
      this.#dirty.clear();
      let fresh: RunnerCatalog;
      try {
        fresh = await this.deps.load();
      } catch (err) {
        this.deps.emit({ type: 'dev.warning', message: `could not read the plugins: ${toLbotError(err).message}` });
        continue;
      }
      if (everything) {
        for (const d of this.#slots.keys()) dirs.add(d);
        for (const p of fresh.plugins.values()) dirs.add(path.resolve(p.dir));
        for (const w of fresh.warnings) {
          const m = /^(.*?): skipped plugin: /.exec(w);
          if (m?.[1]) dirs.add(path.resolve(m[1]));
        }
      }
      for (const dir of [...dirs].sort()) {
        if (this.#closed) return;
        // A newer change to this plugin is queued: skip this round, the next one reads the newer files.
        if (this.#dirty.has(dir) && !this.#everything) continue;
        await this.#reloadDir(dir, fresh);
      }
      this.deps.onSettled();
    }
  }

  #fail(dir: string, identity: string | null, error: string): void {
    const info = this.#info.get(dir) ?? { dir, identity, generation: 0, reloaded_at: null, reload_error: null };
    this.#info.set(dir, { ...info, reload_error: error });
    this.deps.emit({ type: 'dev.reload_failed', plugin: identity ?? info.identity ?? dir, dir, error });
  }

  async #reloadDir(dir: string, fresh: RunnerCatalog): Promise<void> {
    const verdict = judgePlugin(fresh, dir);
    const previous = this.#slots.get(dir);
    if (verdict.kind === 'gone') {
      if (!previous && !this.#info.has(dir)) return;
      this.#slots.delete(dir);
      this.#info.delete(dir);
      this.#served = catalogOf(this.#slots);
      this.deps.emit({ type: 'dev.plugin_removed', plugin: previous?.identity ?? dir, dir });
      return;
    }
    if (verdict.kind === 'broken') return this.#fail(dir, previous?.identity ?? null, verdict.reason);
    const { slot } = verdict;
    const next = new Map(this.#slots);
    next.set(dir, slot);
    const candidate = catalogOf(next);
    this.deps.emit({ type: 'dev.reloading', plugin: slot.identity });
    const t0 = performance.now();
    try {
      await this.deps.prepare?.(slot);
      await this.#host?.reload(slot.identity, candidate);
    } catch (err) {
      return this.#fail(dir, slot.identity, toLbotError(err).message);
    }
    this.#slots = next;
    this.#served = candidate;
    const generation = (this.#info.get(dir)?.generation ?? 0) + 1;
    this.#info.set(dir, { dir, identity: slot.identity, generation, reloaded_at: new Date().toISOString(), reload_error: null });
    this.deps.emit({ type: 'dev.reloaded', plugin: slot.identity, generation, ms: performance.now() - t0 });
  }
}
