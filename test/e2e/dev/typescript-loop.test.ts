// The TypeScript dev loop with a real `lbot dev` process: a runner scaffolded by `lbot runner init` is
// rebuilt from src/ on save, so an edit of src/main.ts changes the next run's reply; a compile error is a
// reload error naming file, line and column with the whole message, and the last good build keeps serving.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LBOT_BIN } from '../../helpers/serve.js';
import { findTsc } from '../../../src/runtime/dev/ts-build.js';
import { eventually, msgEvent, replyOf, startLbot, type LiveProcess } from './dev-helpers.js';

const RUNNER = 'plugin:acme/ts-bot/default';
let cwd: string;
let dataDir: string;
let pluginDir: string;
let dev: LiveProcess;
let url: string;
let token: string;

// The scaffold links the compiler next to this lbot; without one there is nothing to rebuild with.
const tsc = findTsc(process.cwd());

async function replyOfNewRun(): Promise<unknown> {
  const res = await fetch(`${url}/v1/runs?wait=1`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ event: await msgEvent(), runner_id: RUNNER }),
  });
  const body = (await res.json()) as { run_id: string; status: string; reply: string | null };
  expect(body.status).toBe('completed');
  const record = (await (await fetch(`${url}/v1/runs/${body.run_id}`, { headers: { authorization: `Bearer ${token}` } })).json()) as Record<string, unknown>;
  return replyOf(record);
}

beforeAll(async () => {
  if (!tsc) return;
  cwd = await mkdtemp(path.join(os.tmpdir(), 'lbot-ts-loop-'));
  dataDir = path.join(cwd, 'data');
  const init = await execa(process.execPath, [LBOT_BIN, 'runner', 'init', 'ts-bot', '--author', 'acme'], { cwd, reject: false, env: { LBOT_HOME: undefined } });
  expect(init.exitCode, init.stderr).toBe(0);
  pluginDir = path.join(cwd, 'ts-bot');
  dev = startLbot(['--data-dir', dataDir, 'dev', pluginDir, '--port', '0']);
  const ready = await dev.waitLine((l) => l.type === 'dev.ready');
  url = String(ready.url);
  token = (await readFile(path.join(dataDir, 'serve.token'), 'utf8')).trim();
}, 60_000);

afterAll(async () => {
  await dev?.stop();
  if (cwd) await rm(cwd, { recursive: true, force: true });
});

describe.skipIf(!tsc)('lbot dev on a TypeScript runner (skipped: no TypeScript compiler next to lbot)', () => {
  it('an edit of src/main.ts changes the next reply; a type error is reported whole and the last build keeps serving', async () => {
    // The shipped build is current: dev starts without rebuilding (generation 1 is the start).
    expect(await replyOfNewRun()).toBe('You said: ping');
    const main = path.join(pluginDir, 'src', 'main.ts');
    const source = await readFile(main, 'utf8');
    await writeFile(main, source.replace('`${prefix}You said: ${ctx.input.text}`', '`${prefix}Edited: ${ctx.input.text}`'));
    await dev.waitLine((l) => l.type === 'dev.reloaded' && l.generation === 2, 60_000);
    expect(await replyOfNewRun()).toBe('Edited: ping');
    // dev's own rebuild of dist/ is not taken for another edit.
    expect(dev.lines.filter((l) => l.type === 'dev.reloaded')).toHaveLength(2);

    const broken = source.replace('export const runner = defineRunner({', 'const wrong: string = 42;\nexport const runner = defineRunner({');
    await writeFile(main, broken);
    const failed = await dev.waitLine((l) => l.type === 'dev.reload_failed', 60_000);
    const line = broken.split('\n').findIndex((l) => l.startsWith('const wrong')) + 1;
    expect(String(failed.error)).toContain(`src/main.ts:${line}:7: error TS2322: Type 'number' is not assignable to type 'string'.`);
    expect(await replyOfNewRun()).toBe('Edited: ping');

    await writeFile(main, source);
    await dev.waitLine((l) => l.type === 'dev.reloaded' && l.generation === 3, 60_000);
    await eventually(async () => ((await replyOfNewRun()) === 'You said: ping' ? true : undefined), 10_000, 'the fixed reply');
    expect(dev.lines.filter((l) => l.type === 'dev.reloaded')).toHaveLength(3);
  });
});
