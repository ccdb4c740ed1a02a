// The host readies a run's granted models while the plugin process starts, so the runner's first model call
// does not also wait for an SDK to load; a run granted no model readies none.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigSchema, ModelConfigSchema } from '../../../src/core/config.js';
import { createHost } from '../../../src/core/host/host.js';
import type { ModelProvider, PluginConnection, PluginLauncher } from '../../../src/core/host/ports.js';
import { asAsyncStores } from '../../../src/core/stores/async.js';
import { openSqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { systemClock } from '../../../src/runtime/clock.js';
import { createModelProvider } from '../../../src/runtime/models/providers.js';
import { binding, descriptor, envelope, models, scriptedConnection, scriptedCatalog } from './fixtures.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('host.run', () => {
  it("readies the run's granted models before its plugin process is up, and none for a run granted none", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-prepare-'));
    dirs.push(dataDir);
    const stores = openSqliteStores(dataDir);
    const prepared: string[][] = [];
    const real = createModelProvider(models);
    const provider: ModelProvider = { ...real, prepare: (ids) => prepared.push([...ids]) };
    // The plugin process comes up only when the test lets it: what was readied by then was readied while it started.
    let up: (c: PluginConnection) => void = () => undefined;
    const first = new Promise<PluginConnection>((resolve) => (up = resolve));
    const launcher: PluginLauncher = { start: () => first };
    const connection = scriptedConnection((_params, onResult) => {
      onResult({ type: 'message.completed', data: { message: { role: 'assistant', content: 'done' } } });
      onResult({ type: 'run.completed', data: {} });
      return Promise.resolve({ status: 'completed' });
    });
    const d = descriptor({ permissions: { models: ['invoke'] } });
    const catalog = scriptedCatalog(d);
    const host = createHost({
      stores: asAsyncStores(stores),
      launcher,
      catalog: async () => catalog,
      config: ConfigSchema.parse({ models }),
      models: provider,
      clock: systemClock,
      version: 'test',
      warn: () => undefined,
    });
    try {
      const granted = host.run({ event: envelope(), binding: binding({ resource_policy: { allowed_model_uuids: ['m-fake', 'm-other'] } }) });
      await expect.poll(() => prepared).toEqual([['m-fake', 'm-other']]);
      up(connection);
      await expect(granted).resolves.toMatchObject({ status: 'completed' });
      await expect(host.run({ event: envelope({ event_id: 'ev-2' }), binding: binding() })).resolves.toMatchObject({ status: 'completed' });
      expect(prepared).toEqual([['m-fake', 'm-other']]);
    } finally {
      up(connection);
      await host.close();
      stores.close();
    }
  });
});

describe('ModelProvider.prepare', () => {
  it('never fails: unknown ids and models that cannot be set up are left to their calls', async () => {
    const provider = createModelProvider([
      ModelConfigSchema.parse({ id: 'no-url', provider: 'openai', model: 'gpt-4o-mini', api_key: 'sk-x' }),
      ModelConfigSchema.parse({ id: 'no-key', provider: 'anthropic', model: 'claude', api_key_env: 'LBOT_TEST_UNSET_KEY' }),
    ]);
    expect(() => provider.prepare?.(['nope', 'no-url', 'no-key'])).not.toThrow();
    // A rejection left unhandled here would fail the test run.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(
      provider.invoke({ model_id: 'no-url', messages: [], tools: [], extra_args: {}, deadline_at: null, signal: new AbortController().signal }),
    ).rejects.toMatchObject({
      code: 'runtime_error',
    });
  });
});
