// `lbot serve --dev` with the default plugins dir `<data-dir>/plugins`: the watcher ignores lbot's own
// data files but not the plugins under the data dir, so edits there reload the plugin; a run in flight
// finishes on the old version and new runs use the new one.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempPlugins, type TempPlugins } from '../../helpers/plugins.js';
import { startServe, type ServeProcess } from '../../helpers/serve.js';
import { addHotPlugin, eventually, HOT, hotMain, msgEvent, replyOf, gateIn } from './dev-helpers.js';

const open: Array<{ plugins: TempPlugins; serve?: ServeProcess }> = [];

afterEach(async () => {
  for (const f of open.splice(0)) {
    await f.serve?.stop('SIGTERM').catch(() => undefined);
    await f.plugins.cleanup();
  }
});

async function replyOfNewRun(s: ServeProcess): Promise<unknown> {
  const started = await s.request('POST', '/v1/runs', { event: await msgEvent(), runner_id: HOT });
  expect(started.status).toBe(202);
  return replyOf(await s.waitRun((started.json as { run_id: string }).run_id));
}

describe('hot reload (serve --dev, plugins in <data-dir>/plugins)', () => {
  it('an edit of a plugin under the data dir reloads it; the run in flight finishes on the old version', async () => {
    // The temp plugins root is the data dir: its plugins/ is serve's default plugins dir.
    const plugins = await createTempPlugins([]);
    const f: { plugins: TempPlugins; serve?: ServeProcess } = { plugins };
    open.push(f);
    await addHotPlugin(plugins);
    const dataDir = plugins.root;
    expect(plugins.pluginsDir).toBe(path.join(dataDir, 'plugins'));
    const s = (f.serve = await startServe({ dataDir, args: ['--dev'] }));
    expect(await replyOfNewRun(s)).toBe('v1');

    const gate = await gateIn(plugins.dir('hot'));
    // In a conversation of its own: under the default run_policy (enqueue) the new runs of its conversation would wait for it.
    const before = await s.request('POST', '/v1/runs', { event: { ...(await msgEvent()), conversation_id: 'c-held' }, runner_id: HOT, config: { gate } });
    expect(before.status).toBe(202);
    const beforeId = (before.json as { run_id: string }).run_id;

    await writeFile(path.join(plugins.dir('hot'), 'main.js'), hotMain('v2'));
    await eventually(async () => ((await replyOfNewRun(s)) === 'v2' ? true : undefined), 10_000, 'a v2 reply');

    expect((await s.request('GET', `/v1/runs/${beforeId}`)).json).toMatchObject({ status: 'running' });
    await writeFile(gate, '');
    const old = await s.waitRun(beforeId);
    expect(old.status).toBe('completed');
    expect(replyOf(old)).toBe('v1');
    expect(s.proc.exitCode).toBeNull();
    expect(await s.stop()).toEqual({ exitCode: 0 });
  }, 60_000);
});
