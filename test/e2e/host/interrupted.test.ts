// A run whose `lbot run` process is killed is marked `interrupted` by the next lbot command on that data dir.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, expect, it } from 'vitest';
import { FIXTURE_EVENTS, FIXTURE_RUNNERS } from '../../helpers/plugins.js';
import { LBOT_BIN } from '../../helpers/serve.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

it('marks the run of a killed lbot run as interrupted', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lbot-interrupted-'));
  dirs.push(dir);
  const cfg = path.join(dir, 'cfg.json');
  await writeFile(cfg, JSON.stringify({ script: [{ api: { action: 'state.get', args: { scope: 'conversation', key: 'k' } }, report: true }, { sleep_ms: 60000 }] }));
  const data = path.join(dir, 'data');
  const run = execa(process.execPath, [LBOT_BIN, '--data-dir', data, '--json', 'run', '--event', path.join(FIXTURE_EVENTS, 'msg.json'), '--plugin', path.join(FIXTURE_RUNNERS, 'scripted'), '--config', cfg], { reject: false, buffer: false });
  // The first reported API call means the run is inside the runner.
  await new Promise<void>((resolve) => run.stdout?.on('data', () => resolve()));
  run.kill('SIGKILL');
  await run;
  const list = await execa(process.execPath, [LBOT_BIN, '--data-dir', data, 'runs', 'list', '--json']);
  const runs = list.stdout.split('\n').map((l) => JSON.parse(l) as { status: string });
  expect(runs).toHaveLength(1);
  expect(runs[0]?.status).toBe('interrupted');
});
