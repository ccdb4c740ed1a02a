// A run whose `lbot run` or `lbot serve` process is killed is marked `interrupted`, with the host-side
// error host.interrupted (retryable), by the next lbot command on that data dir.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, expect, it } from 'vitest';
import { createTempPlugins, FIXTURE_EVENTS, FIXTURE_RUNNERS, type TempPlugins } from '../../helpers/plugins.js';
import { LBOT_BIN, startServe, type ServeProcess } from '../../helpers/serve.js';

const dirs: string[] = [];
const serves: ServeProcess[] = [];
const pluginDirs: TempPlugins[] = [];
afterEach(async () => {
  for (const s of serves.splice(0)) await s.stop('SIGKILL').catch(() => undefined);
  for (const p of pluginDirs.splice(0)) await p.cleanup();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const INTERRUPTED = { status: 'interrupted', error: { code: 'host.interrupted', retryable: true } };

it('marks the run of a killed lbot run as interrupted', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lbot-interrupted-'));
  dirs.push(dir);
  const cfg = path.join(dir, 'cfg.json');
  await writeFile(
    cfg,
    JSON.stringify({ script: [{ api: { action: 'state.get', args: { scope: 'conversation', key: 'k' } }, report: true }, { sleep_ms: 60000 }] }),
  );
  const data = path.join(dir, 'data');
  const run = execa(
    process.execPath,
    [
      LBOT_BIN,
      '--data-dir',
      data,
      '--json',
      'run',
      '--event',
      path.join(FIXTURE_EVENTS, 'msg.json'),
      '--plugin',
      path.join(FIXTURE_RUNNERS, 'scripted'),
      '--config',
      cfg,
    ],
    { reject: false, buffer: false },
  );
  // The first reported API call means the run is inside the runner.
  await new Promise<void>((resolve) => run.stdout?.on('data', () => resolve()));
  run.kill('SIGKILL');
  await run;
  const list = await execa(process.execPath, [LBOT_BIN, '--data-dir', data, 'runs', 'list', '--json']);
  const runs = JSON.parse(list.stdout) as Array<{ status: string }>;
  expect(runs).toHaveLength(1);
  expect(runs[0]?.status).toBe('interrupted');
  const runId = String((runs[0] as { run_id?: unknown }).run_id);
  const show = await execa(process.execPath, [LBOT_BIN, '--data-dir', data, 'runs', 'show', runId, '--json']);
  expect(JSON.parse(show.stdout)).toMatchObject(INTERRUPTED);
});

it('marks the run of a killed lbot serve as interrupted with host.interrupted, and serve serves it after a restart', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lbot-interrupted-'));
  dirs.push(dir);
  const data = path.join(dir, 'data');
  const plugins = await createTempPlugins(['scripted']);
  pluginDirs.push(plugins);
  const serve = await startServe({ dataDir: data, pluginsDir: plugins.pluginsDir });
  serves.push(serve);
  const event = JSON.parse(await readFile(path.join(FIXTURE_EVENTS, 'msg.json'), 'utf8')) as Record<string, unknown>;
  const script = [{ api: { action: 'state.get', args: { scope: 'conversation', key: 'k' } } }, { sleep_ms: 60000 }];
  const started = await serve.request('POST', '/v1/runs', { event, runner_id: 'plugin:acme/scripted/default', config: { script } });
  const runId = (started.json as { run_id: string }).run_id;
  // The first audited API call means the run is inside the runner.
  for (;;) {
    const rec = (await serve.request('GET', `/v1/runs/${runId}`)).json as { api_calls?: unknown[] };
    if ((rec.api_calls?.length ?? 0) > 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await serve.stop('SIGKILL');

  const show = await execa(process.execPath, [LBOT_BIN, '--data-dir', data, 'runs', 'show', runId, '--json'], { reject: false });
  expect(show.exitCode, show.stderr).toBe(0);
  expect(JSON.parse(show.stdout)).toMatchObject(INTERRUPTED);
  // A restarted serve reports the same record over HTTP.
  const again = await startServe({ dataDir: data, pluginsDir: plugins.pluginsDir });
  serves.push(again);
  expect((await again.request('GET', `/v1/runs/${runId}`)).json).toMatchObject(INTERRUPTED);
});
