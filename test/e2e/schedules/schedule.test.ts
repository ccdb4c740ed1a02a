// A real `lbot serve` firing an every-second schedule: one run per tick across kill -9 and restart.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempPlugins, type TempPlugins } from '../../helpers/plugins.js';
import { LBOT_BIN, startServe, type ServeProcess } from '../../helpers/serve.js';

const SCRIPTED = 'plugin:acme/scripted/default';
type Fixture = { dataDir: string; plugins: TempPlugins; serve?: ServeProcess };
const open: Fixture[] = [];
afterEach(async () => {
  for (const f of open.splice(0)) {
    await f.serve?.stop('SIGKILL').catch(() => undefined);
    await rm(f.dataDir, { recursive: true, force: true });
    await f.plugins.cleanup();
  }
});

const lbot = (f: Fixture, args: string[]) => execa(process.execPath, [LBOT_BIN, '--data-dir', f.dataDir, ...args], { reject: false });

describe('lbot schedule', () => {
  it('an every-second schedule fires one run per tick across kill -9 and restart of serve; run-now fires once more', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-sched-'));
    const f: Fixture = { dataDir, plugins: await createTempPlugins(['scripted']) };
    open.push(f);
    await writeFile(path.join(dataDir, 'tick.json'), JSON.stringify({ data: { job: 'digest' } }));
    await writeFile(
      path.join(dataDir, 'lbot.config.json'),
      JSON.stringify({
        bindings: [
          {
            binding_id: 'ticks',
            runner_id: SCRIPTED,
            event_types: ['schedule.tick'],
            runner_config: { script: [{ emit: { type: 'run.completed', data: {} } }] },
          },
        ],
      }),
    );
    const add = await lbot(f, ['schedule', 'add', 'every-second', '--cron', '* * * * * *', '--event', path.join(dataDir, 'tick.json')]);
    expect(add.exitCode, add.stderr).toBe(0);
    expect((await lbot(f, ['schedule', 'add', 'bad', '--cron', 'sometimes'])).stderr).toContain('not a valid cron expression');
    expect((await lbot(f, ['schedule', 'list'])).stdout).toContain('every-second  * * * * * *  next ');

    const runs = async (s: ServeProcess) =>
      ((await s.request('GET', '/v1/runs?limit=1000')).json as { items: Array<{ run_id: string; event_id: string; binding_id: string; status: string }> })
        .items;
    const s1 = (f.serve = await startServe({ dataDir, pluginsDir: f.plugins.pluginsDir }));
    await expect.poll(async () => (await runs(s1)).length, { timeout: 20_000, interval: 100 }).toBeGreaterThanOrEqual(2);
    await s1.stop('SIGKILL');
    await new Promise((r) => setTimeout(r, 2500));
    const s2 = (f.serve = await startServe({ dataDir, pluginsDir: f.plugins.pluginsDir }));
    const before = (await runs(s2)).length;
    await expect.poll(async () => (await runs(s2)).length, { timeout: 20_000, interval: 100 }).toBeGreaterThanOrEqual(before + 2);

    const run = await lbot(f, ['--json', 'schedule', 'run-now', 'every-second', '--url', s2.url]);
    expect(run.exitCode, run.stderr).toBe(0);
    const runNowId = (JSON.parse(run.stdout) as { run_id: string }).run_id;
    await s2.waitRun(runNowId);
    await s2.stop('SIGTERM');

    const s3 = (f.serve = await startServe({ dataDir, pluginsDir: f.plugins.pluginsDir }));
    const sched = (await s3.request('GET', '/v1/schedules')).json as { items: Array<{ name: string; ticks: Array<{ tick_at: number; run_ids: string[] }> }> };
    const all = (await runs(s3)).filter((r) => r.binding_id === 'ticks');
    await s3.stop('SIGTERM');
    // The ticks table agrees: each fired tick has one run, and that run is the tick's event.
    const ticks = sched.items.find((i) => i.name === 'every-second')!.ticks;
    expect(ticks.length).toBeGreaterThanOrEqual(4);
    for (const t of ticks) {
      expect(t.run_ids).toHaveLength(1);
      expect(all.find((r) => r.run_id === t.run_ids[0])?.event_id).toBe(`schedule:every-second:${Math.round(t.tick_at * 1000)}`);
    }
    const tickIds = all.map((r) => r.event_id).filter((id) => /^schedule:every-second:\d+$/.test(id));
    // Every tick ran exactly once: no event id twice, across the kill and both restarts.
    expect(new Set(tickIds).size).toBe(tickIds.length);
    expect(tickIds.length).toBeGreaterThanOrEqual(4);
    expect(all.filter((r) => r.event_id.startsWith('schedule:every-second:now:'))).toHaveLength(1);
  });
});
