// `lbot run`: reads events, resolves the binding, runs each event in order on a local host, stops at the
// first failed run (the rest are reported as skipped).
import type { Config } from '../core/config.js';
import { resolveRunnerAlias } from '../core/config.js';
import { LbotError } from '../core/errors.js';
import { assertSafeEnv } from '../core/env-policy.js';
import { filterAdapterParams } from '../core/host/adapter-params.js';
import { resolveBindings } from '../core/host/binding-resolver.js';
import { readEventFile, readJsonObject } from './input-files.js';
import type { RunOutcome, RunRequest } from '../core/host/host.js';
import type { RunnerCatalog } from '../core/host/ports.js';
import { BindingSchema, defaultCliBinding, type Binding } from '../core/protocol/binding.js';
import type { EventEnvelope } from '../core/protocol/event.js';
import type { PlatformChoice } from '../core/gateway/index.js';
import { openLocalHost, type LocalHostOptions } from './local-host.js';

export type ReplayOptions = {
  dataDir: string;
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


/** The binding named by --binding / --runner (null: resolve from the config per event), with --config applied later. */
async function loadBinding(opts: ReplayOptions): Promise<Binding | null> {
  if (opts.bindingFile) {
    const raw = await readJsonObject(opts.bindingFile, '--binding');
    const parsed = BindingSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new LbotError('invalid_argument', `--binding ${opts.bindingFile}: ${issue?.path.join('.') || '(binding)'}: ${issue?.message ?? 'invalid'}`, { details: { path: issue?.path.map(String) ?? [] } });
    }
    assertSafeEnv(parsed.data.env, `--binding ${opts.bindingFile}: env`);
    return opts.runner ? { ...parsed.data, runner_id: resolveRunnerAlias(opts.runner, opts.config) } : parsed.data;
  }
  return opts.runner ? defaultCliBinding(resolveRunnerAlias(opts.runner, opts.config)) : null;
}

/** With --plugin and no --runner: the plugin's only runner, or its `default` runner. */
function pluginRunner(catalog: RunnerCatalog, pluginDir: string): string {
  const [only] = catalog.runners;
  if (catalog.runners.length === 1 && only) return only.id;
  const def = catalog.runners.find((r) => r.runner_name === 'default');
  if (def) return def.id;
  throw new LbotError('runner.not_found', `no runner to pick in ${pluginDir}: ${catalog.runners.length === 0 ? 'it has no valid runner' : 'it has several; pass --runner'}`, {
    details: { plugin_dir: pluginDir, warnings: [...catalog.warnings] },
  });
}

function bindingFor(event: EventEnvelope, base: Binding | null, config: Config, runnerConfig?: Record<string, unknown>): Binding {
  const found = base ?? resolveBindings(event, config.bindings)[0];
  if (found) return runnerConfig ? { ...found, runner_config: runnerConfig } : found;
  throw new LbotError('binding.not_found', `no enabled binding handles ${event.event_type}`, {
    hint: 'pass --runner ID (or --plugin DIR), or add a binding with `lbot binding add`',
    details: { event_type: event.event_type },
  });
}

export async function replayEvents(opts: ReplayOptions): Promise<ReplayResult> {
  const events = await readEventFile(opts.eventFile, opts.platform, opts.config.runs.max_event_data_bytes);
  let base = await loadBinding(opts);
  const runnerConfig = opts.configFile ? await readJsonObject(opts.configFile, '--config') : undefined;
  const adapterParams = Object.keys(opts.vars).length ? filterAdapterParams(opts.vars) : null;
  if (!base && !opts.pluginDir) for (const e of events) bindingFor(e.envelope, null, opts.config); // fail before opening stores
  const local = openLocalHost({ dataDir: opts.dataDir, pluginsDir: opts.pluginsDir, pluginDir: opts.pluginDir, config: opts.config, warn: opts.warn, ...opts.hostHooks });
  try {
    if (opts.pluginDir && !base) base = defaultCliBinding(pluginRunner(await local.catalog(), opts.pluginDir));
    const outcomes: RunOutcome[] = [];
    for (const [i, { envelope, raw }] of events.entries()) {
      if (opts.signal.aborted) return { outcomes, skipped: events.length - i };
      const outcome = await local.host.run({
        event: envelope,
        ...(raw === undefined ? {} : { raw }),
        binding: bindingFor(envelope, base, opts.config, runnerConfig),
        adapterParams,
        signal: opts.signal,
        ...(opts.onDelivered ? { onDelivered: opts.onDelivered } : {}),
        ...(opts.onObserved ? { onObserved: opts.onObserved } : {}),
        ...(opts.onStarted ? { onStarted: opts.onStarted } : {}),
      });
      outcomes.push(outcome);
      if (outcome.status !== 'completed') return { outcomes, skipped: events.length - i - 1 };
    }
    return { outcomes, skipped: 0 };
  } finally {
    await local.close();
  }
}
