// The operator log of `lbot serve --log-format json`: every stderr line is one JSON record, with requests,
// run start and end (status, duration), a plugin crash and its restart, and webhook refusals; --quiet keeps
// warnings only.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempPlugins, FIXTURE_EVENTS, type TempPlugins } from '../../helpers/plugins.js';
import { startServe, type ServeProcess } from '../../helpers/serve.js';
import { prettyLine } from '../../../src/runtime/server/logger.js';

const SCRIPTED = 'plugin:acme/scripted/default';
const say = (text: string) => ({ emit: { type: 'message.completed', data: { message: { role: 'assistant', content: text } } } });

let dataDir: string;
let plugins: TempPlugins;
let serve: ServeProcess;

type LogRecord = Record<string, unknown> & { event?: string; level: number; msg: string };

function records(stderr: string): LogRecord[] {
  return stderr
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const parsed: unknown = JSON.parse(l); // throws (fails the test) on any line that is not JSON
      if (typeof parsed !== 'object' || parsed === null) throw new Error(`not a log record: ${l}`);
      return parsed as LogRecord;
    });
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`no ${what} in the log:\n${serve.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-logs-'));
  plugins = await createTempPlugins(['scripted']);
  await writeFile(path.join(dataDir, 'lbot.config.json'), JSON.stringify({ serve: { webhooks: { telegram: { secret_token: 'the-secret' } } } }));
  serve = await startServe({ dataDir, pluginsDir: plugins.pluginsDir, args: ['--log-format', 'json'] });
});

afterAll(async () => {
  await serve?.stop();
  await rm(dataDir, { recursive: true, force: true });
  await plugins?.cleanup();
});

describe('serve --log-format json', () => {
  it('logs requests, run ends with status and duration, a plugin crash and its restart, webhook refusals', async () => {
    const event = JSON.parse(await readFile(path.join(FIXTURE_EVENTS, 'msg.json'), 'utf8')) as Record<string, unknown>;
    const ok = await serve.request('POST', '/v1/runs?wait=1', { event, runner_id: SCRIPTED, config: { script: [say('pong')] } });
    expect(ok.json).toMatchObject({ status: 'completed' });
    const crashed = await serve.request('POST', '/v1/runs?wait=1', {
      event: { ...event, event_id: 'ev-crash' },
      runner_id: SCRIPTED,
      config: { script: [{ exit: 3 }] },
    });
    expect(crashed.json).toMatchObject({ status: 'failed', error: { code: 'runner.crashed' } });
    const again = await serve.request('POST', '/v1/runs?wait=1', {
      event: { ...event, event_id: 'ev-after' },
      runner_id: SCRIPTED,
      config: { script: [say('back')] },
    });
    expect(again.json).toMatchObject({ status: 'completed' });
    const refused = await fetch(`${serve.url}/v1/webhooks/telegram`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(refused.status).toBe(401);

    // The request record is written once the answer has gone out, so it may trail the client a little.
    await until(() => records(serve.stderr()).some((r) => r.event === 'request' && r.path === '/v1/webhooks/telegram'), 'webhook request record');
    const log = records(serve.stderr());
    for (const r of log) {
      expect(typeof r.time).toBe('string');
      expect(typeof r.level).toBe('number');
    }
    expect(log.find((r) => r.event === 'serve.ready')).toMatchObject({ url: serve.url });

    const ends = log.filter((r) => r.event === 'run.end');
    expect(ends.map((r) => r.status)).toEqual(['completed', 'failed', 'completed']);
    for (const r of ends) {
      expect(r).toMatchObject({ runner_id: SCRIPTED, run_id: expect.any(String) });
      expect(typeof r.duration_ms).toBe('number');
      expect(r.duration_ms as number).toBeGreaterThanOrEqual(0);
    }
    expect(ends[1]).toMatchObject({ error_code: 'runner.crashed' });
    expect(log.filter((r) => r.event === 'run.start')).toHaveLength(3);

    const crash = log.find((r) => r.event === 'plugin.crash');
    expect(crash).toMatchObject({ plugin: expect.stringContaining('acme/scripted'), code: 'runner.crashed', level: 50 });
    const restart = log.find((r) => r.event === 'plugin.restart');
    expect(restart).toMatchObject({ plugin: crash?.plugin });
    expect(log.indexOf(restart!)).toBeGreaterThan(log.indexOf(crash!));

    const requests = log.filter((r) => r.event === 'request');
    expect(requests.find((r) => r.path === '/v1/runs' && r.method === 'POST')).toMatchObject({ status: 200, duration_ms: expect.any(Number) });
    expect(requests.find((r) => r.path === '/v1/webhooks/telegram')).toMatchObject({ status: 401 });
    expect(log.find((r) => r.event === 'webhook.rejected')).toMatchObject({ platform: 'telegram', level: 40 });
    // The bearer token is never logged.
    expect(serve.stderr()).not.toContain(serve.token);
  });

  it('--quiet logs warnings only', async () => {
    const quietDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-logs-quiet-'));
    const quiet = await startServe({ dataDir: quietDir, pluginsDir: plugins.pluginsDir, args: ['--log-format', 'json', '--quiet'] });
    try {
      expect((await quiet.request('GET', '/v1/runs')).status).toBe(200);
      expect((await quiet.request('GET', '/v1/nope')).status).toBe(404);
    } finally {
      await quiet.stop();
      await rm(quietDir, { recursive: true, force: true });
    }
    for (const r of records(quiet.stderr())) expect(r.level).toBeGreaterThanOrEqual(40);
  });
});

describe('serve log on stop', () => {
  it('writes every record, the last ones included, before the process exits', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lbot-logs-stop-'));
    const s = await startServe({ dataDir: dir, pluginsDir: plugins.pluginsDir, args: ['--log-format', 'json'] });
    try {
      // A burst of requests whose lines are buffered while earlier writes are in flight.
      await Promise.all(Array.from({ length: 50 }, () => s.request('GET', '/v1/runs')));
    } finally {
      await s.stop();
      await rm(dir, { recursive: true, force: true });
    }
    const log = records(s.stderr());
    expect(log.filter((r) => r.event === 'request')).toHaveLength(50);
    expect(log.at(-1)).toMatchObject({ event: 'serve.stopped' });
  });
});

describe('the pretty format', () => {
  it('renders one record a line: time, level, event, message and the other fields', () => {
    const line = prettyLine(
      {
        level: 30,
        time: '2026-01-01T10:20:30.000Z',
        pid: 1,
        event: 'run.end',
        msg: 'run completed',
        run_id: 'r1',
        status: 'completed',
        duration_ms: 12,
        note: 'two words',
      },
      false,
    );
    expect(line).toMatch(/^\d\d:\d\d:\d\d INFO  run\.end run completed run_id=r1 status=completed duration_ms=12 note="two words"$/);
    expect(prettyLine({ level: 40, msg: 'x' }, true)).toContain('\x1b[33m');
  });
});
