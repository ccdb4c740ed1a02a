// `lbot runner test DIR`: loads one plugin, starts it through a real host on a temporary data dir,
// drives it with the probe events, shuts it down, and judges what happened with the check catalogue.
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ConfigSchema } from '../../core/config.js';
import { LbotError, toLbotError } from '../../core/errors.js';
import { createHost, type Host } from '../../core/host/host.js';
import type { RunnerCatalog } from '../../core/host/ports.js';
import { discoverPlugins } from '../../core/plugins/discovery.js';
import { unrecognizedNote } from '../../core/plugins/langbot-manifest.js';
import { defaultCliBinding } from '../../core/protocol/binding.js';
import { runChecks } from '../../core/conformance/checks.js';
import { PROBES, type Evidence, type PluginFiles, type ProbeName, type ProbeRun, type ShutdownEvidence } from '../../core/conformance/evidence.js';
import { buildReport, renderJunit, type ConformanceReport } from '../../core/conformance/report.js';
import { openHostStores } from '../stores/open.js';
import { LBOT_VERSION } from '../../package-root.js';
import { systemClock } from '../clock.js';
import { createModelProvider } from '../models/providers.js';
import type { PluginWarning } from '../plugins/connection.js';
import { createPluginLauncher } from '../plugins/launcher.js';
import { pluginSandboxFor, type IsolationMode } from '../plugins/sandbox.js';
import { readJsonObject } from '../input-files.js';
import { ConnectionWatch } from './instrument.js';
import { processesOf, processTreeObservable, reapLeftovers } from './leftovers.js';
import { observeFamilyExit } from '../process/group.js';
import { CANCEL_AFTER_MS, DEADLINE_PROBE_S, probeEvent } from './probes.js';
import { driveRun, type ProbeContext } from './drive.js';
import { startAgentRig } from './agent-probes.js';
import type { ToolsRequest } from '../../core/host/host-types.js';

export type ConformanceOptions = {
  dir: string;
  /** Runner config for the probes (`--config`); `timeout` is set per probe unless given. */
  runnerConfig?: Record<string, unknown> | undefined;
  initializeTimeoutMs?: number | undefined;
  /** Seconds a message probe may take. */
  probeTimeoutS?: number | undefined;
  strict: boolean;
  /** Also hold tool-using runners to the agent checks, with the fake model server (`--agent`). */
  agent?: boolean | undefined;
  /** How the plugin runs (plugins.isolation); default auto. */
  isolation?: IsolationMode | undefined;
  log?(line: string): void;
  /** Where the sandbox's warnings go (auto without a sandbox); default: dropped. */
  warn?(message: string): void;
};

export const DEFAULT_PROBE_TIMEOUT_S = 10;
export const DEFAULT_INIT_TIMEOUT_MS = 10_000;
const SHUTDOWN_TIMEOUT_MS = 1000;
/** How long the processes of an exited plugin get to end on their own before they count as left over. */
const LEFTOVER_SETTLE_MS = 1000;
/** The connection's warning for a run/result naming a run id the host never gave the plugin. */
const STRAY_RESULT = /sent a run\/result for unknown run /;
const CLOSE_GRACE_MS = 2000;

/** Reads the plugin in `dir` (and nothing else of its parent directory) with the host's own discovery. */
async function loadFiles(dir: string): Promise<{ files: PluginFiles; catalog: RunnerCatalog | null }> {
  const files: PluginFiles = { dir, manifestError: null, componentWarnings: [], setAside: [], identity: null, runners: [] };
  try {
    await stat(path.join(dir, 'manifest.yaml'));
  } catch {
    files.manifestError = `no manifest.yaml in ${dir}`;
    return { files, catalog: null };
  }
  const all = await discoverPlugins(path.dirname(dir));
  const mine = (w: string) => w.startsWith(`${dir}:`) || w.startsWith(`${dir}/`);
  const warnings = all.warnings.filter(mine);
  const skipped = warnings.find((w) => w.startsWith(`${dir}: skipped plugin: `));
  if (skipped) {
    files.manifestError = skipped.slice(`${dir}: skipped plugin: `.length);
    return { files, catalog: null };
  }
  const plugins = new Map([...all.plugins].filter(([, p]) => path.resolve(p.dir) === dir));
  const runners = all.runners.filter((r) => path.resolve(r.plugin_dir) === dir);
  files.identity = [...plugins.keys()][0] ?? null;
  const relative = warnings.map((w) => (w.startsWith(`${dir}/`) ? w.slice(dir.length + 1) : w));
  // A LangBot runner's unknown declarations are set aside by discovery: noted, not failures.
  const notes = runners.flatMap((r) => (r.unrecognized ? [`: ${unrecognizedNote(r.unrecognized)}`] : []));
  const setAside = (w: string) => notes.some((n) => w.endsWith(n));
  files.setAside = relative.filter(setAside);
  files.componentWarnings = relative.filter((w) => !setAside(w));
  files.runners = runners.map((r) => ({ id: r.id, runner_name: r.runner_name, capabilities: r.capabilities }));
  return { files, catalog: { runners, plugins, warnings } };
}

/** Runs one probe; rejects only when the run could not be started at all (bad config, unknown runner). */
async function probe(p: ProbeContext, name: ProbeName, runner_id: string): Promise<ProbeRun> {
  const deadlineS = name === 'deadline' ? DEADLINE_PROBE_S : typeof p.runnerConfig.timeout === 'number' ? p.runnerConfig.timeout : p.probeTimeoutS;
  const run = await driveRun(p, {
    event: probeEvent(name, p.maxDataBytes),
    binding: defaultCliBinding(runner_id, { ...p.runnerConfig, timeout: deadlineS }),
    deadlineS,
    cancelAfterMs: name === 'cancel' ? CANCEL_AFTER_MS : undefined,
  });
  return { probe: name, ...run };
}

/** Closes the host and reports how the first live plugin process ended. */
async function shutdown(host: Host, watch: ConnectionWatch): Promise<ShutdownEvidence | null> {
  const live = watch.connections.filter((c) => c.failure === null && c.exitStatus === null);
  const first = live[0];
  const started = performance.now();
  let exitedAt = started;
  void first?.exited.then(() => (exitedAt = performance.now()));
  await host.close();
  if (!first) return null;
  await first.exited;
  const ms = exitedAt - started;
  const status = first.exitStatus;
  return {
    exitedBySelf: status !== null && status.signal === null && ms < SHUTDOWN_TIMEOUT_MS + CLOSE_GRACE_MS,
    ms,
    code: status?.code ?? null,
    signal: status?.signal ?? null,
  };
}

/** Runs the whole suite against the plugin in `opts.dir`. */
export async function runConformance(opts: ConformanceOptions): Promise<ConformanceReport> {
  const t0 = performance.now();
  const dir = path.resolve(opts.dir);
  const log = opts.log ?? (() => undefined);
  const { files, catalog } = await loadFiles(dir);
  const runnable = catalog !== null && files.identity !== null && files.runners.length > 0 && files.componentWarnings.length === 0;
  // The fake model servers of the agent probes; closed with the host below.
  const rig = opts.agent && runnable ? await startAgentRig(catalog.runners.filter((r) => r.compatible)) : null;
  const config = ConfigSchema.parse({ plugins: { isolation: opts.isolation ?? 'auto' }, models: rig?.models ?? [] });
  const evidence: Evidence = { files, handshake: null, probesBlocked: null, runs: [], shutdown: null, graceMs: config.runs.cancel_grace_ms };
  if (opts.agent) evidence.agent = { unfit: [], runs: [], blocked: null };
  try {
    if (runnable && files.identity) {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-runner-test-'));
      const stores = await openHostStores(dataDir, null);
      const watch = new ConnectionWatch();
      const stray: Array<{ run_id: string; message: string }> = [];
      const onWarning = (w: PluginWarning) => {
        if (w.run_id !== undefined && STRAY_RESULT.test(w.message)) stray.push({ run_id: w.run_id, message: w.message });
      };
      const sandbox = pluginSandboxFor(config, dataDir, { warn: opts.warn ?? (() => undefined) });
      const launcher = watch.wrap(
        createPluginLauncher({
          initializeTimeoutMs: opts.initializeTimeoutMs ?? DEFAULT_INIT_TIMEOUT_MS,
          graceMs: CLOSE_GRACE_MS,
          shutdownTimeoutMs: SHUTDOWN_TIMEOUT_MS,
          onWarning,
          langbotPython: config.langbot.python,
          sandbox,
        }),
      );
      const host = createHost({
        stores,
        launcher,
        catalog: async () => catalog,
        config,
        models: createModelProvider(config.models),
        ...(rig ? { tools: (req: ToolsRequest) => rig.tools(req) } : {}),
        clock: systemClock,
        version: LBOT_VERSION,
        warn: () => undefined,
      });
      try {
        const hs = performance.now();
        try {
          log(`starting ${files.identity}`);
          await host.reload(files.identity, catalog);
          evidence.handshake = { ok: true, ms: performance.now() - hs };
        } catch (err) {
          const e = toLbotError(err);
          evidence.handshake = { ok: false, code: e.code, message: e.message };
        }
        if (evidence.handshake.ok) {
          const ctx: ProbeContext = {
            host,
            stores,
            watch,
            runnerConfig: opts.runnerConfig ?? {},
            probeTimeoutS: opts.probeTimeoutS ?? DEFAULT_PROBE_TIMEOUT_S,
            maxDataBytes: config.runs.max_event_data_bytes,
          };
          outer: for (const runner of catalog.runners.filter((r) => r.compatible)) {
            for (const name of PROBES) {
              log(`probe ${name} → ${runner.id}`);
              try {
                evidence.runs.push(await probe(ctx, name, runner.id));
              } catch (err) {
                const e = toLbotError(err);
                evidence.probesBlocked = `the probes could not start a run: ${e.code}: ${e.message}${e.code === 'invalid_argument' ? ' (pass a runner config with --config)' : ''}`;
                break outer;
              }
            }
          }
          if (rig && evidence.agent && !evidence.probesBlocked) {
            try {
              evidence.agent = await rig.run(ctx, log);
            } catch (err) {
              const e = toLbotError(err);
              evidence.agent.blocked = `the agent probes could not start a run: ${e.code}: ${e.message}`;
            }
          }
        }
        const observable = await processTreeObservable();
        const roots = watch.connections.flatMap((c) => (c.pgid !== null && c.exitStatus === null ? [c.pgid] : []));
        const started = observable ? await processesOf(roots) : [];
        // lbot ends a plugin's leftover processes when the plugin exits; those it had to end count too.
        const ended = new Set<number>();
        const unobserve = observeFamilyExit((pids) => pids.forEach((pid) => ended.add(pid)));
        evidence.shutdown = await shutdown(host, watch);
        unobserve();
        const running = observable ? await reapLeftovers(started, LEFTOVER_SETTLE_MS) : null;
        evidence.leftovers = running === null ? null : [...started.filter((p) => ended.has(p.pid)), ...running.filter((p) => !ended.has(p.pid))];
        const given = new Set(evidence.runs.map((r) => r.run_id));
        evidence.strayResults = stray.filter((w) => !given.has(w.run_id)).map((w) => w.message);
      } finally {
        await host.close();
        await stores.close();
        await rm(dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    await rig?.close();
  }
  return buildReport({ pluginDir: dir, plugin: files.identity, strict: opts.strict, checks: runChecks(evidence), durationMs: performance.now() - t0 });
}

export type RunnerTestOptions = Omit<ConformanceOptions, 'runnerConfig'> & { configFile?: string | undefined; junitFile?: string | undefined };

/** The `lbot runner test` entry point: reads --config, runs the suite, writes --junit. */
export async function runRunnerTest(opts: RunnerTestOptions): Promise<ConformanceReport> {
  const runnerConfig = opts.configFile ? await readJsonObject(opts.configFile, '--config') : undefined;
  try {
    if (!(await stat(opts.dir)).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new LbotError('invalid_argument', `${opts.dir} is not a plugin directory`, { hint: 'pass the directory that holds manifest.yaml' });
  }
  const report = await runConformance({ ...opts, runnerConfig });
  if (opts.junitFile) {
    await mkdir(path.dirname(path.resolve(opts.junitFile)), { recursive: true });
    await writeFile(opts.junitFile, renderJunit(report));
  }
  return report;
}
