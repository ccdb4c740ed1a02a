// `lbot run` starts the first run's plugin before its host exists (runtime/plugins/early-start.ts): the host
// takes that process over instead of starting a second one, a call it makes reaches the host's handler,
// a process nobody took is stopped, and a run refused before its plugin starts starts nothing.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openConfigFile } from '../../../src/core/stores/config-file.js';
import type { PluginConnection, PluginLauncher, PluginSpec, ProxyCall, ProxyCallHandler } from '../../../src/core/host/ports.js';
import type { PluginProcessEvent } from '../../../src/core/host/observer.js';
import { startEarly } from '../../../src/runtime/plugins/early-start.js';
import { createPluginLauncher } from '../../../src/runtime/plugins/launcher.js';
import { liveProcessGroups } from '../../../src/runtime/process/group.js';
import { replayEvents, startFirstPlugin } from '../../../src/runtime/replay.js';
import { loadCatalog } from '../../../src/runtime/catalog.js';
import { BindingSchema } from '../../../src/core/protocol/binding.js';
import { createTempPlugins, FIXTURE_EVENTS, FIXTURE_RUNNERS, type TempPlugins } from '../../helpers/plugins.js';

let plugins: TempPlugins;
let dataDir: string;

beforeAll(async () => {
  plugins = await createTempPlugins(['echo']);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-early-'));
});
afterAll(async () => {
  await plugins.cleanup();
  await rm(dataDir, { recursive: true, force: true });
});
afterEach(() => {
  expect(liveProcessGroups()).toEqual([]);
});

const replay = (processes: PluginProcessEvent[], config = openConfigFile(dataDir, {}).config) =>
  replayEvents({
    dataDir,
    pluginsDir: plugins.pluginsDir,
    pluginDir: path.join(FIXTURE_RUNNERS, 'echo'),
    config,
    eventFile: path.join(FIXTURE_EVENTS, 'msg.json'),
    platform: 'auto',
    vars: {},
    signal: new AbortController().signal,
    warn: () => undefined,
    hostHooks: { observer: { onPluginProcess: (e) => processes.push(e) } },
  });

describe('lbot run: the plugin starts before the host', () => {
  it('runs the event on the process started early: one process start, stopped at the end', async () => {
    const processes: PluginProcessEvent[] = [];
    const { outcomes } = await replay(processes);
    expect(outcomes.map((o) => o.status)).toEqual(['completed']);
    expect(outcomes[0]?.reply).toBe('ping');
    expect(processes.filter((e) => e.kind === 'started')).toHaveLength(1);
    expect(processes.filter((e) => e.kind === 'exited')).toHaveLength(1);
  });

  it('a run refused before its plugin starts starts no process; the host refuses it as before', async () => {
    const config = openConfigFile(dataDir, {}).config;
    const catalog = await loadCatalog(plugins.pluginsDir, path.join(FIXTURE_RUNNERS, 'echo'));
    const opts = { config, dataDir, warn: () => undefined, signal: new AbortController().signal };
    const echo = BindingSchema.parse({ binding_id: 'b', runner_id: 'plugin:acme/echo/default' });
    const disabled = { ...config, plugins: { ...config.plugins, enabled: false } };
    expect(startFirstPlugin({ ...opts, config: disabled }, catalog, echo)).toBeNull();
    expect(startFirstPlugin(opts, catalog, { ...echo, runner_id: 'plugin:acme/nope/default' })).toBeNull();
    expect(startFirstPlugin(opts, catalog, { ...echo, env: { NODE_OPTIONS: '--require /tmp/x.js' } })).toBeNull();
    expect(liveProcessGroups()).toEqual([]);
    // The same binding, allowed, does start one (stopped again here).
    const early = startFirstPlugin(opts, catalog, echo);
    expect(early).not.toBeNull();
    await expect.poll(() => liveProcessGroups().length, { timeout: 10_000 }).toBe(1);
    await early?.close();
    // Through replay, the host reports the refusal.
    const processes: PluginProcessEvent[] = [];
    await expect(replay(processes, disabled)).rejects.toMatchObject({ code: 'plugins.disabled' });
    expect(processes).toEqual([]);
  });
});

describe('startEarly', () => {
  const spec = (env: Record<string, string> = {}): PluginSpec => ({
    identity: 'acme/echo',
    dir: path.join(FIXTURE_RUNNERS, 'echo'),
    execution: { node: { path: 'main.js' } },
    env,
  });
  /** A launcher that records each start and answers it with a stand-in connection. */
  const recording = () => {
    const starts: { spec: PluginSpec; onApiCall: ProxyCallHandler; connection: Promise<PluginConnection> }[] = [];
    const launcher: PluginLauncher = {
      start: (s, onApiCall) => {
        const connection = Promise.resolve({ identity: s.identity } as PluginConnection);
        starts.push({ spec: s, onApiCall, connection });
        return connection;
      },
    };
    return { launcher, starts };
  };
  const call = (method: string): ProxyCall => ({
    caller_plugin: 'acme/echo',
    method,
    params: {},
    signal: new AbortController().signal,
    notify: () => undefined,
  });

  it("hands the early process to the first start of the same spec; its calls wait for and reach that start's handler", async () => {
    const { launcher, starts } = recording();
    const early = startEarly(launcher, spec());
    expect(starts).toHaveLength(1);
    // A call the process makes before the host took it waits for the host's handler.
    const before = starts[0]!.onApiCall(call('state.get'));
    const seen: string[] = [];
    const taken = early.start(spec(), async (c) => {
      seen.push(c.method);
      return { answered: c.method };
    });
    expect(taken).toBe(starts[0]!.connection);
    await expect(before).resolves.toEqual({ answered: 'state.get' });
    await expect(starts[0]!.onApiCall(call('state.set'))).resolves.toEqual({ answered: 'state.set' });
    expect(seen).toEqual(['state.get', 'state.set']);
    // Another env, or the same spec a second time, is a start of its own.
    const other = () => null;
    void early.start(spec({ GREETING: 'hi' }), other);
    void early.start(spec(), other);
    expect(starts).toHaveLength(3);
    expect(starts[1]!.onApiCall).toBe(other);
    expect(starts[2]!.spec.env).toEqual({});
    await early.close(); // taken: not the early start's to stop
  });

  it('close stops a real early process nobody took', async () => {
    const early = startEarly(createPluginLauncher(), spec());
    // Started and initialized: the launcher's start has a live process group by now.
    await expect.poll(() => liveProcessGroups().length, { timeout: 10_000 }).toBe(1);
    await early.close();
    // afterEach: no process group is left.
  });
});
