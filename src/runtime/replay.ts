// `lbot run`: reads events, resolves the binding, runs each event in order on a local host, stops at the
// first failed run (the rest are reported as skipped).
import type { Config } from '../core/config.js';
import { assertSafeEnv } from '../core/env-policy.js';
import { filterAdapterParams } from '../core/host/adapter-params.js';
import { dispatch, soleRunner, type DispatchRequest, type NamedBinding } from '../core/host/dispatch.js';
import { pluginSpecFor } from '../core/host/plugin-pool.js';
import type { RunnerCatalog } from '../core/host/ports.js';
import { runTarget } from '../core/host/run-setup.js';
import { readEventFile, readJsonObject } from './input-files.js';
import type { RunOutcome, RunRequest } from '../core/host/host.js';
import { BindingSchema, type Binding } from '../core/protocol/binding.js';
import { parseOrThrow } from '../core/zod-issue.js';
import type { PlatformChoice } from '../core/gateway/index.js';
import type { LocalHostOptions } from './local-host.js';
import { loadCatalog } from './catalog.js';
import { startEarly, type EarlyStart } from './plugins/early-start.js';
import { createLocalLauncher } from './plugins/local-launcher.js';

export type ReplayOptions = {
  dataDir: string;
  /** The run stores on PostgreSQL (--store); null or absent: SQLite in the data dir. */
  databaseUrl?: string | null | undefined;
  pluginsDir: string;
  pluginDir?: string | undefined;
  config: Config;
  eventFile: string;
  platform: PlatformChoice;
  runner?: string | undefined;
  bindingFile?: string | undefined;
  configFile?: string | undefined;
  vars: Record<string, string>;
  signal: AbortSignal;
  warn(message: string): void;
  /** Record/replay wrappers around the host's model and tool providers, and a run observer. */
  hostHooks?: Pick<LocalHostOptions, 'decorateModels' | 'decorateTools' | 'observer'> | undefined;
} & Pick<RunRequest, 'onDelivered' | 'onObserved' | 'onStarted'>;

export type ReplayResult = { outcomes: RunOutcome[]; skipped: number };

/** The binding file named by --binding (null: none). */
async function loadBinding(opts: ReplayOptions): Promise<NamedBinding | undefined> {
  if (!opts.bindingFile) return undefined;
  const raw = await readJsonObject(opts.bindingFile, '--binding');
  const binding = parseOrThrow(BindingSchema, raw, `--binding ${opts.bindingFile}`, '(binding)');
  assertSafeEnv(binding.env, `--binding ${opts.bindingFile}: env`);
  return { binding, source: 'given' };
}

export async function replayEvents(opts: ReplayOptions): Promise<ReplayResult> {
  const events = await readEventFile(opts.eventFile, opts.platform, opts.config.runs.max_event_data_bytes);
  const named: Omit<DispatchRequest, 'event'> = {
    config: opts.config,
    binding: await loadBinding(opts),
    runner: opts.runner,
    runnerConfig: opts.configFile ? await readJsonObject(opts.configFile, '--config') : undefined,
  };
  const adapterParams = Object.keys(opts.vars).length ? filterAdapterParams(opts.vars) : null;
  if (!opts.pluginDir) for (const e of events) dispatch({ ...named, event: e.envelope }); // fail before opening stores
  // The catalog is read once for the whole replay; the first run's plugin starts while the host loads.
  const catalog = await loadCatalog(opts.pluginsDir, opts.pluginDir);
  // --plugin DIR with no runner or binding named: the plugin's sole runner is the one named.
  if (opts.pluginDir && !named.binding && named.runner === undefined) named.runner = soleRunner(catalog, opts.pluginDir).id;
  const first = events[0];
  const early = first ? startFirstPlugin(opts, catalog, dispatch({ ...named, event: first.envelope })) : null;
  const { openLocalHost } = await import('./local-host.js');
  const local = await openLocalHost({
    dataDir: opts.dataDir,
    databaseUrl: opts.databaseUrl,
    commitWindowMs: opts.config.runs.commit_window_ms,
    pluginsDir: opts.pluginsDir,
    pluginDir: opts.pluginDir,
    config: opts.config,
    warn: opts.warn,
    catalog: () => Promise.resolve(catalog),
    ...(early ? { launcher: early } : {}),
    ...opts.hostHooks,
  }).catch(async (err: unknown) => {
    await early?.close();
    throw err;
  });
  // What is printed tells the user what the stores hold: the group of writes commits before each line is passed
  // on (docs/host.md "Group commit"), in order; the outcomes are returned once every line is out.
  let told: Promise<void> = Promise.resolve();
  const committed =
    <A extends unknown[]>(tell: (...args: A) => void) =>
    (...args: A): void => {
      told = told.then(() => local.stores.commit()).then(() => tell(...args));
    };
  const replay = async (): Promise<ReplayResult> => {
    const outcomes: RunOutcome[] = [];
    for (const [i, { envelope, raw }] of events.entries()) {
      if (opts.signal.aborted) return { outcomes, skipped: events.length - i };
      const outcome = await local.host.run({
        event: envelope,
        ...(raw === undefined ? {} : { raw }),
        binding: dispatch({ ...named, event: envelope }),
        adapterParams,
        signal: opts.signal,
        ...(opts.onDelivered ? { onDelivered: committed(opts.onDelivered) } : {}),
        ...(opts.onObserved ? { onObserved: committed(opts.onObserved) } : {}),
        ...(opts.onStarted ? { onStarted: committed(opts.onStarted) } : {}),
      });
      outcomes.push(outcome);
      if (outcome.status !== 'completed') return { outcomes, skipped: events.length - i - 1 };
    }
    return { outcomes, skipped: 0 };
  };
  try {
    const result = await replay().catch(async (err: unknown) => {
      await told.catch(() => undefined);
      throw err;
    });
    await told;
    return result;
  } finally {
    await local.close();
    await early?.close();
  }
}

/**
 * Starts the plugin of the first run now, for the host to take over: when the run is refused before its
 * plugin starts (plugins disabled, an unknown runner, an unsafe env), nothing is started and the host reports it.
 */
export function startFirstPlugin(
  opts: Pick<ReplayOptions, 'config' | 'dataDir' | 'warn' | 'signal'>,
  catalog: RunnerCatalog,
  binding: Binding,
): EarlyStart | null {
  if (!opts.config.plugins.enabled) return null;
  let identity: string;
  try {
    identity = runTarget(catalog, binding).identity;
  } catch {
    return null;
  }
  const plugin = catalog.plugins.get(identity);
  if (!plugin) return null;
  const launcher = createLocalLauncher({ config: opts.config, dataDir: opts.dataDir, warn: opts.warn });
  return startEarly(launcher, pluginSpecFor(plugin, binding), opts.signal);
}
