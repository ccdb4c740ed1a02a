// `lbot dev` and `lbot serve --dev`: `serve` plus the watcher and reload controllers on one bus, the
// last-good catalog the host reads, a state file for `runner list`, and re-runs of an event file.
import { statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { LbotError, toLbotError } from '../../core/errors.js';
import { dispatch, type RunnerChoice } from '../../core/host/dispatch.js';
import type { HostObserver } from '../../core/host/observer.js';
import type { RunnerCatalog } from '../../core/host/ports.js';
import type { Binding } from '../../core/protocol/binding.js';
import type { EventEnvelope } from '../../core/protocol/event.js';
import type { ConfigFile } from '../../core/stores/config-file.js';
import { loadCatalog } from '../catalog.js';
import { readEventFile, readJsonObject } from '../input-files.js';
import { isLoopbackHost, startServe, type ServeHandle } from '../server/serve.js';
import { DevBus } from './bus.js';
import { removeDevState, writeDevState } from './dev-state.js';
import { Reloader } from './reloader.js';
import type { PluginSlot } from '../../core/dev/served-catalog.js';
import { LAZY_BOOTSTRAP, StandbyLauncher } from './standby.js';
import { createPluginLauncher } from '../plugins/launcher.js';
import { isolationModeFor, pluginSandboxFor } from '../plugins/sandbox.js';
import { createWatcher, ignoreRule, noopWatcher, type Watcher } from './watcher.js';
import { buildTs, needsBuild, tsBuildTarget } from './ts-build.js';

export const DEFAULT_DEBOUNCE_MS = 40;

export type DevOptions = {
  dataDir: string;
  /** A plugins directory, or one plugin directory (it holds manifest.yaml). */
  dir: string;
  configFile: ConfigFile;
  host?: string | undefined;
  port?: number | undefined;
  watch: boolean;
  debounceMs?: number | undefined;
  /** Event file run at start (when given) and by `r`. */
  eventFile?: string | undefined;
  runner?: string | undefined;
  /** Runner config JSON file for the session's own runs (re-read on every run). */
  runnerConfigFile?: string | undefined;
  warn(message: string): void;
  log?(line: string): void;
};

export type DevSession = {
  readonly url: string;
  readonly serve: ServeHandle;
  readonly bus: DevBus;
  readonly eventFile: string | null;
  /** Runs an event file (default: the last one) through the served runners; errors go to the bus. */
  runEvent(file?: string): Promise<void>;
  /** JSON files next to the last event file (or in the cwd): candidates for "pick another event". */
  eventFiles(): Promise<string[]>;
  /** Resolves when no reload is queued or running (tests, benchmarks). */
  settled(): Promise<void>;
  close(): Promise<void>;
};

async function isPluginDir(dir: string): Promise<boolean> {
  try {
    return (await stat(path.join(dir, 'manifest.yaml'))).isFile();
  } catch {
    return false;
  }
}

function observerFor(bus: DevBus): HostObserver {
  return {
    onRunStarted: (run) => bus.emit({ type: 'run.started', ...run }),
    onDelivered: (item) => bus.emit({ type: 'run.delivered', item }),
    onObserved: (run_id, notice) => bus.emit({ type: 'run.observed', run_id, notice }),
    onProxyCall: (rec) =>
      bus.emit({
        type: 'api.call',
        run_id: rec.run_id,
        action: rec.action,
        ok: rec.outcome.ok,
        code: rec.outcome.ok ? null : rec.outcome.error.code,
        message: rec.outcome.ok ? null : rec.outcome.error.message,
      }),
    onRunEnded: (outcome) => bus.emit({ type: 'run.ended', outcome }),
  };
}

// Over 100 lines because it wires one session's owners (reloader, standby launcher, serve, watcher) that
// close together; each owner is its own module and this only connects them.
export async function startDev(opts: DevOptions): Promise<DevSession> {
  const root = path.resolve(opts.dir);
  try {
    if (!(await stat(root)).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new LbotError('invalid_argument', `${opts.dir} is not a directory`, {
      hint: 'pass a plugins directory or a plugin directory (one holding manifest.yaml)',
    });
  }
  const single = await isPluginDir(root);
  const pluginsDir = single ? path.dirname(root) : root;
  const pluginDir = single ? root : undefined;
  const bus = new DevBus();
  const load = (): Promise<RunnerCatalog> => loadCatalog(pluginsDir, pluginDir);
  let serve: ServeHandle | undefined;
  let writing: Promise<void> = Promise.resolve();
  const persist = () => {
    if (!serve) return;
    const url = serve.url;
    writing = writing
      .then(() =>
        writeDevState(opts.dataDir, {
          version: 1,
          pid: process.pid,
          url,
          plugins_dir: pluginsDir,
          plugin_dir: pluginDir ?? null,
          updated_at: new Date().toISOString(),
          plugins: reloader.plugins(),
          runners: [...reloader.catalog().runners],
        }),
      )
      .catch((err: unknown) => opts.warn(`could not write the dev state file: ${toLbotError(err).message}`));
  };
  // Build outputs dev itself wrote, by plugin dir: their change events are not edits to reload for again.
  const builtAt = new Map<string, number>();
  const prepare = async (slot: PluginSlot): Promise<void> => {
    if (!('node' in slot.plugin.execution)) return;
    const target = tsBuildTarget(path.resolve(slot.dir), slot.plugin.execution.node.path);
    if (!target || !needsBuild(target)) return;
    // While tsc writes, everything it writes is its own; afterwards, whatever is not newer than the build.
    builtAt.set(target.dir, Number.POSITIVE_INFINITY);
    let built: boolean;
    try {
      built = await buildTs(target, { pluginCompiler: isolation === 'none' });
    } finally {
      builtAt.set(target.dir, Date.now());
    }
    if (!built)
      bus.emit({
        type: 'dev.warning',
        message: `${slot.identity}: ${path.relative(target.dir, target.executed)} is older than its TypeScript sources and no TypeScript compiler was found ${isolation === 'none' ? `for ${target.dir} (npm install there)` : 'next to lbot (a sandboxed plugin is built only with the compiler installed with lbot, never its own)'}: the stale build runs; keep \`npx tsc -w\` running to build it yourself`,
      });
  };
  const reloader = new Reloader({ load, emit: (e) => bus.emit(e), onSettled: persist, prepare }, await load());
  const isolation = isolationModeFor(opts.configFile.config, !isLoopbackHost(opts.host ?? opts.configFile.config.serve.host));
  const sandbox = pluginSandboxFor(opts.configFile.config, opts.dataDir, { warn: opts.warn, mode: isolation });
  const launcher = new StandbyLauncher(
    createPluginLauncher({
      bootstrapPath: LAZY_BOOTSTRAP,
      onWarning: (w) => opts.warn(w.message),
      langbotPython: opts.configFile.config.langbot.python,
      sandbox,
    }),
  );
  serve = await startServe({
    dataDir: opts.dataDir,
    pluginsDir,
    configFile: opts.configFile,
    host: opts.host,
    port: opts.port,
    warn: opts.warn,
    ...(opts.log ? { log: opts.log } : {}),
    hostHooks: { catalog: async () => reloader.catalog(), observer: observerFor(bus), launcher, ...(pluginDir ? { pluginDir } : {}) },
    onClose: [() => launcher.close()],
  });
  const handle = serve;
  let watcher: Watcher = noopWatcher;
  const runs = new AbortController();
  let lastEvent = opts.eventFile ? path.resolve(opts.eventFile) : null;
  try {
    await reloader.start(handle.local.host);
    persist();
    if (opts.watch) {
      const pluginDirOf = (p: string): string | null => {
        if (single) return root;
        const first = path.relative(root, p).split(path.sep)[0];
        return first && !first.startsWith('..') ? path.join(root, first) : null;
      };
      const executedDir = (dir: string): string | null => {
        const plugin = [...reloader.catalog().plugins.values()].find((p) => path.resolve(p.dir) === dir);
        if (!plugin || !('node' in plugin.execution)) return null;
        const first = path.normalize(plugin.execution.node.path).split(path.sep)[0];
        return first && first !== path.normalize(plugin.execution.node.path) ? first : null;
      };
      /** A file of the executed build dir that dev's own rebuild wrote (not newer than that build). */
      const writtenByBuild = (dir: string, p: string): boolean => {
        const at = builtAt.get(dir);
        const executed = executedDir(dir);
        if (at === undefined || !executed || !p.startsWith(`${path.join(dir, executed)}${path.sep}`)) return false;
        try {
          return statSync(p).mtimeMs <= at;
        } catch {
          return false;
        }
      };
      watcher = await createWatcher({
        root,
        debounceMs: opts.debounceMs ?? DEFAULT_DEBOUNCE_MS,
        ignore: ignoreRule({
          root,
          extraIgnored: [path.resolve(opts.dataDir)],
          extraKept: [path.join(path.resolve(opts.dataDir), 'plugins')],
          pluginDirOf,
          executedDir,
        }),
        onError: (err) => bus.emit({ type: 'dev.warning', message: `watcher: ${toLbotError(err).message}` }),
        onBatch: (paths) => {
          const byPlugin = new Map<string, string[]>();
          for (const p of paths) {
            const dir = pluginDirOf(p);
            if (dir && !writtenByBuild(dir, p)) byPlugin.set(dir, [...(byPlugin.get(dir) ?? []), p]);
          }
          for (const [dir, changed] of byPlugin) bus.emit({ type: 'dev.changed', plugin_dir: dir, paths: changed });
          reloader.schedule([...byPlugin.keys()]);
        },
      });
    }
  } catch (err) {
    reloader.close();
    await handle.close();
    await launcher.close();
    throw err;
  }
  if (lastEvent) bus.emit({ type: 'dev.event_file', file: lastEvent });
  bus.emit({ type: 'dev.ready', url: handle.url, plugins: [...reloader.catalog().plugins.values()].map((p) => ({ identity: p.identity, dir: p.dir })) });

  // The runners of the developed directory are the fallback when no --runner is named and no configured
  // binding matches; the bundled runners are served too, but never picked for an unnamed event.
  const bindingFor = async (event: EventEnvelope): Promise<Binding> =>
    dispatch({
      event,
      config: opts.configFile.config,
      runner: opts.runner,
      runnerConfig: opts.runnerConfigFile ? await readJsonObject(opts.runnerConfigFile, '--config') : undefined,
      fallback: { catalog: runnersUnder(reloader.catalog(), root), from: opts.dir },
    });

  let closing: Promise<void> | undefined;
  const session: DevSession = {
    url: handle.url,
    serve: handle,
    bus,
    get eventFile() {
      return lastEvent;
    },
    async runEvent(file) {
      const target = file ? path.resolve(file) : lastEvent;
      if (!target) {
        bus.emit({ type: 'dev.warning', message: 'no event file yet: start with --event FILE or press e to pick one' });
        return;
      }
      if (target !== lastEvent) bus.emit({ type: 'dev.event_file', file: target });
      lastEvent = target;
      try {
        const config = opts.configFile.config;
        const events = await readEventFile(target, 'auto', config.runs.max_event_data_bytes);
        for (const { envelope, raw } of events) {
          if (runs.signal.aborted) return;
          const outcome = await handle.local.host.run({
            event: envelope,
            ...(raw === undefined ? {} : { raw }),
            binding: await bindingFor(envelope),
            signal: runs.signal,
          });
          if (outcome.status !== 'completed') return;
        }
      } catch (err) {
        bus.emit({ type: 'dev.warning', message: `${path.basename(target)}: ${toLbotError(err).message}` });
      }
    },
    async eventFiles() {
      const dir = lastEvent ? path.dirname(lastEvent) : process.cwd();
      const names = await readdir(dir).catch(() => []);
      return names
        .filter((n) => n.endsWith('.json'))
        .sort()
        .slice(0, 50)
        .map((n) => path.join(dir, n));
    },
    settled: () => reloader.idle(),
    close: () =>
      (closing ??= (async () => {
        reloader.close();
        runs.abort();
        await watcher.close();
        await handle.close();
        await writing;
        await removeDevState(opts.dataDir);
      })()),
  };
  return session;
}

/** The runners whose plugin lives in `root` (the directory `lbot dev` develops). */
function runnersUnder(catalog: RunnerCatalog, root: string): RunnerChoice {
  const inside = (dir: string) => dir === root || dir.startsWith(`${root}${path.sep}`);
  const runners = catalog.runners.filter((r) => {
    const plugin = catalog.plugins.get(`${r.plugin_author}/${r.plugin_name}`);
    return plugin !== undefined && inside(path.resolve(plugin.dir));
  });
  return { runners, warnings: catalog.warnings };
}
