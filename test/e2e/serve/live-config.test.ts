// A running `lbot serve` follows config edits made by other lbot processes: `lbot binding add` and
// `lbot model add` take effect without a restart; a broken edit keeps the last good config.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempPlugins, FIXTURE_EVENTS, type TempPlugins } from '../../helpers/plugins.js';
import { LBOT_BIN, startServe, type ServeProcess } from '../../helpers/serve.js';

const SCRIPTED = 'plugin:acme/scripted/default';
const MODEL_CALLS = 'plugin:acme/model-calls/default';

let dataDir: string;
let plugins: TempPlugins;
let serve: ServeProcess;

async function lbot(args: string[]) {
  const r = await execa(process.execPath, [LBOT_BIN, '--data-dir', dataDir, '--plugins', plugins.pluginsDir, ...args], { reject: false });
  expect(r.exitCode, r.stderr).toBe(0);
  return r;
}

/** Retries `attempt` until it returns a value, for an edit the server sees after its file watcher fires. */
async function eventually<T>(attempt: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`serve did not pick up ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-live-config-'));
  plugins = await createTempPlugins(['scripted', 'model-calls']);
  serve = await startServe({ dataDir, pluginsDir: plugins.pluginsDir });
});

afterAll(async () => {
  await serve?.stop();
  await rm(dataDir, { recursive: true, force: true });
  await plugins?.cleanup();
});

describe('serve follows config edits', () => {
  it('a binding added by lbot binding add routes the next event, without a restart', async () => {
    const event = JSON.parse(await readFile(path.join(FIXTURE_EVENTS, 'join.json'), 'utf8')) as Record<string, unknown>;
    const before = await serve.request('POST', '/v1/events', { ...event, event_id: 'live-0' });
    expect(before.status).toBe(404);
    expect(before.json).toMatchObject({ error: { code: 'binding.not_found' } });

    const cfg = path.join(dataDir, 'runner-config.json');
    await writeFile(cfg, JSON.stringify({ script: [{ emit: { type: 'message.completed', data: { message: { role: 'assistant', content: 'welcome' } } } }] }));
    await lbot(['binding', 'add', '--id', 'joins', '--runner', SCRIPTED, '--event-type', String(event.event_type), '--config', cfg]);

    let n = 0;
    const runId = await eventually(async () => {
      const r = await serve.request('POST', '/v1/events', { ...event, event_id: `live-${++n}` });
      if (r.status === 404) return undefined;
      expect(r.status, r.text).toBe(202);
      return (r.json as { run_ids: string[] }).run_ids[0];
    }, 'the added binding');
    const record = await serve.waitRun(runId!);
    expect(record).toMatchObject({ status: 'completed', binding_id: 'joins' });
  });

  it('a model added by lbot model add serves the next run, and a broken edit keeps the last good config', async () => {
    const msg = JSON.parse(await readFile(path.join(FIXTURE_EVENTS, 'msg.json'), 'utf8')) as Record<string, unknown>;
    let n = 0;
    const run = (model: string) =>
      serve.request('POST', '/v1/runs?wait=1', {
        event: { ...msg, event_id: `model-${++n}` },
        runner_id: MODEL_CALLS,
        config: { model, calls: [{ fn: 'invoke', args: { model_id: model, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] } }] },
      });
    const missing = await run('live');
    // Before the add, the run's resources have no model `live`: the call is refused.
    expect(missing.json).toMatchObject({ status: 'completed' });
    expect((missing.json as { reply: string }).reply).toContain('resource_not_authorized');

    await lbot(['model', 'add', 'live', '--provider', 'fake', '--reply', 'fresh from the config']);
    const reply = await eventually(async () => {
      const r = await run('live');
      expect(r.status, r.text).toBe(200);
      return r.text.includes('fresh from the config') ? r.json : undefined;
    }, 'the added model');
    expect(reply).toMatchObject({ status: 'completed' });

    const configFile = path.join(dataDir, 'lbot.config.json');
    const good = await readFile(configFile, 'utf8');
    await writeFile(configFile, '{"models": [', { mode: 0o600 });
    await eventually(async () => (serve.stderr().includes('the changed config file was not applied') ? true : undefined), 'the broken edit');
    const still = await run('live');
    expect(still.text).toContain('fresh from the config');
    await writeFile(configFile, good, { mode: 0o600 });
  });
});
