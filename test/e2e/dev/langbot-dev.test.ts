// The developer loop on a LangBot SDK plugin (fixtures/runners/langbot-wire) with real processes: `lbot dev`
// restarts the Python process on a `.py` and a `.yaml` edit, `lbot serve` runs it through POST /v1/runs,
// and a `--record` cassette of its model calls replays in a fresh data dir without any model config.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempPlugins, type TempPlugins } from '../../helpers/plugins.js';
import { LBOT_BIN, startServe, type ServeProcess } from '../../helpers/serve.js';
import { withReason } from '../../helpers/skip.js';
import { replyOf, startLbot, type LiveProcess } from './dev-helpers.js';

const RUNNER = 'plugin:lbot-fixtures/wire-agent/default';
const FIXTURE = 'langbot-wire';
const COMPONENT_PY = 'components/agent_runner/default.py';
const hasPython = (await execa('python3', ['--version'], { reject: false })).exitCode === 0;

type Fixture = { root: string; dataDir: string; plugins: TempPlugins; serve?: ServeProcess; live?: LiveProcess };
const open: Fixture[] = [];

async function setup(): Promise<Fixture> {
  const plugins = await createTempPlugins([FIXTURE]);
  const root = await mkdtemp(path.join(os.tmpdir(), 'lbot-langbot-dev-'));
  const dataDir = path.join(root, 'data');
  await mkdir(dataDir);
  const f: Fixture = { root, dataDir, plugins };
  open.push(f);
  return f;
}

afterEach(async () => {
  for (const f of open.splice(0)) {
    await f.serve?.stop('SIGTERM').catch(() => undefined);
    await f.live?.stop().catch(() => undefined);
    await rm(f.root, { recursive: true, force: true });
    await f.plugins.cleanup();
  }
});

const event = (text: string) => ({
  event_id: `ev-${Math.random().toString(36).slice(2)}`,
  event_type: 'message.received',
  source: 'api',
  conversation_id: 'c1',
  actor: { actor_type: 'user', actor_id: 'u1' },
  input: { text, contents: [{ type: 'text', text }], attachments: [] },
  delivery: { surface: 'cli', supports_streaming: true },
});

/** POST /v1/runs with `text`, waits for the run, returns its reply. */
async function reply(url: string, token: string, text: string): Promise<string> {
  const call = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  const started = await call('POST', '/v1/runs', { event: event(text), runner_id: RUNNER });
  expect(started.status, JSON.stringify(started.json)).toBe(202);
  for (;;) {
    const rec = (await call('GET', `/v1/runs/${String(started.json.run_id)}`)).json;
    if (rec.status !== 'running') {
      expect(rec.status, JSON.stringify(rec)).toBe('completed');
      return String(replyOf(rec));
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const bootOf = (text: string) => /boot=([0-9a-f]+)$/.exec(text)?.[1] ?? '';

describe.skipIf(!hasPython)(withReason('the dev loop on a LangBot SDK plugin', !hasPython && 'python3 is missing'), () => {
  it('lbot dev restarts the Python process on a .py edit (the next reply changes) and on a .yaml edit', async () => {
    const f = await setup();
    const dir = f.plugins.dir(FIXTURE);
    const eventFile = path.join(f.root, 'reply.json');
    await writeFile(eventFile, JSON.stringify(event('reply')));
    const live = (f.live = startLbot([
      '--data-dir',
      f.dataDir,
      '--plugins',
      f.plugins.pluginsDir,
      'dev',
      f.plugins.pluginsDir,
      '--port',
      '0',
      '--event',
      eventFile,
    ]));
    const ready = await live.waitLine((l) => l.type === 'serve.ready');
    const url = String(ready.url);
    const token = (await readFile(path.join(f.dataDir, 'serve.token'), 'utf8')).trim();
    const firstReply = await live.waitLine((l) => l.type === 'message.completed');
    expect(await live.waitLine((l) => l.type === 'run.summary')).toMatchObject({ status: 'completed' });
    const firstText = String((Reflect.get(firstReply.data as object, 'message') as { content?: unknown }).content);
    expect(firstText).toMatch(/^reply v1 boot=/);
    const boot1 = bootOf(firstText);

    await writeFile(path.join(dir, COMPONENT_PY), (await readFile(path.join(dir, COMPONENT_PY), 'utf8')).replace('REPLY = "v1"', 'REPLY = "v2"'));
    await live.waitLine((l) => l.type === 'dev.reloaded' && l.generation === 2);
    const second = await reply(url, token, 'reply');
    expect(second).toMatch(/^reply v2 boot=/);
    expect(bootOf(second)).not.toBe(boot1);

    await f.plugins.editYaml(FIXTURE, 'components/agent_runner/default.yaml', (doc) => {
      Reflect.set(Reflect.get(doc, 'metadata') as object, 'label', { en_US: 'Wire Agent v3' });
    });
    await live.waitLine((l) => l.type === 'dev.reloaded' && l.generation === 3);
    const third = await reply(url, token, 'reply');
    expect(third).toMatch(/^reply v2 boot=/);
    expect(bootOf(third)).not.toBe(bootOf(second));
    expect(await live.stop()).toBe(0);
  });

  it('lbot serve runs it through POST /v1/runs', async () => {
    const f = await setup();
    const s = (f.serve = await startServe({ dataDir: f.dataDir, pluginsDir: f.plugins.pluginsDir }));
    expect(await reply(s.url, s.token, 'echo 你好 serve')).toBe('echo 你好 serve');
    expect((await s.stop()).exitCode).toBe(0);
  });

  it('a --record cassette of its model calls (streamed and count_tokens) replays in a fresh data dir with no model config, --check passing', async () => {
    const f = await setup();
    await writeFile(
      path.join(f.dataDir, 'lbot.config.json'),
      JSON.stringify({ models: [{ id: 'm-fake', provider: 'fake', reply: 'FAKE_PONG', tokenizer: 'o200k_base' }] }),
    );
    const cfg = path.join(f.root, 'cfg.json');
    await writeFile(cfg, JSON.stringify({ model: { primary: 'm-fake', fallbacks: [] } }));
    const fresh = path.join(f.root, 'fresh');
    await mkdir(fresh);
    // One event file holding both events: one record and one replay, each on one plugin process.
    const file = path.join(f.root, 'events.json');
    await writeFile(file, JSON.stringify([event('llm hi'), event('tokens hello world')]));
    const run = async (dataDir: string, extra: string[]) => {
      const args = ['--data-dir', dataDir, '--plugins', f.plugins.pluginsDir, '--json', 'run', '--event', file, '--runner', RUNNER, '--config', cfg, ...extra];
      const r = await execa(process.execPath, [LBOT_BIN, ...args], { reject: false, env: { LBOT_HOME: undefined } });
      const texts = r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; data?: { message?: { content?: string } } })
        .filter((l) => l.type === 'message.completed')
        .map((l) => l.data?.message?.content);
      return { exitCode: r.exitCode, stderr: r.stderr, texts };
    };
    const tape = path.join(f.root, 'tape.json');
    const rec = await run(f.dataDir, ['--record', tape]);
    expect(rec.exitCode, rec.stderr).toBe(0);
    expect(rec.texts).toEqual([expect.stringMatching(/^llm FAKE_PONG /), expect.stringMatching(/^tokens [1-9]\d*$/)]);
    const cassette = JSON.parse(await readFile(tape, 'utf8')) as { runs: Array<{ calls: Array<{ action: string }> }> };
    expect(cassette.runs.map((r) => r.calls.map((c) => c.action))).toEqual([['models.stream'], ['models.count_tokens']]);
    const replay = await run(fresh, ['--replay', tape, '--check']);
    expect(replay.exitCode, replay.stderr).toBe(0);
    expect(replay.texts).toEqual(rec.texts);
  });
});
