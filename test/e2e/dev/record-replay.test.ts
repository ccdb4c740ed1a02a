// `lbot run --record / --replay / --check`: a cassette of the scripted runner against the fake model
// replays to identical results in a fresh data dir without any model config; a changed reply fails
// --check with a diff, and a request the cassette does not hold fails with replay.mismatch.
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { api, done, errorOf, eventPath, parseLines, probe, say, scenario, SCRIPTED, type Scenario, type Step } from '../host/harness.js';

const invoke = (content: string): Step => api('models.invoke', { model_id: 'm-fake', messages: [{ role: 'user', content }] });
const binding = { binding_id: 'b-replay', runner_id: SCRIPTED, resource_policy: { allowed_model_uuids: ['m-fake'] } };

type Line = { type: string; data?: { message?: { content?: string } }; status?: string };
const messages = (stdout: string) =>
  parseLines<Line>(stdout)
    .filter((l) => l.type === 'message.completed')
    .map((l) => l.data?.message?.content);

let counter = 0;

/** `lbot run` of the scripted runner on msg.json with the model binding, in `dataDir`. */
async function runWith(s: Scenario, dataDir: string, script: Step[], extra: string[]) {
  const cfg = await s.writeJson(`cfg-${++counter}.json`, { script });
  const bindingFile = await s.writeJson('binding.json', binding);
  const args = [
    '--data-dir',
    dataDir,
    '--plugins',
    s.plugins.pluginsDir,
    '--json',
    'run',
    '--event',
    eventPath('msg.json'),
    '--binding',
    bindingFile,
    '--config',
    cfg,
    ...extra,
  ];
  return s.lbot(args, { globals: false });
}

async function recorded(script: Step[] = [invoke('ping'), say('done'), done()]) {
  const s = await scenario();
  await s.writeConfig({ models: [{ id: 'm-fake', provider: 'fake', reply: 'FAKE_PONG', api_key: 'sk-test-SECRET123' }] });
  const cassette = path.join(s.root, 'tapes', 'ping.json');
  const rec = await runWith(s, s.dataDir, script, ['--record', cassette]);
  expect(rec.exitCode, rec.stderr).toBe(0);
  return { s, cassette, rec };
}

const freshDir = async (s: Scenario, name: string) => {
  const dir = path.join(s.root, name);
  await mkdir(dir);
  return dir;
};

describe('record and replay', () => {
  it('records every proxy call, the model answers and the final results, without secrets', async () => {
    const { cassette, rec } = await recorded();
    expect(messages(rec.stdout)).toEqual([
      '{"ok":true,"result":{"message":{"role":"assistant","content":"FAKE_PONG"},"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2},"finish_reason":"stop","model":"m-fake"}}',
      'done',
    ]);
    const text = await readFile(cassette, 'utf8');
    expect(text).not.toContain('sk-test-SECRET123');
    const tape = JSON.parse(text) as {
      lbot_cassette: number;
      models: unknown[];
      runs: Array<{ calls: Array<Record<string, unknown>>; answers: Array<Record<string, unknown>>; results: Record<string, unknown> }>;
    };
    expect(tape.lbot_cassette).toBe(1);
    expect(tape.models).toEqual([{ id: 'm-fake', provider: 'fake', model_type: 'llm' }]);
    const [run] = tape.runs;
    expect(run?.calls).toEqual([
      {
        seq: 0,
        action: 'models.invoke',
        params: { messages: [{ content: 'ping', role: 'user' }], model_id: 'm-fake' },
        outcome: {
          ok: true,
          result: {
            message: { content: 'FAKE_PONG', role: 'assistant' },
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
            finish_reason: 'stop',
            model: 'm-fake',
          },
        },
      },
    ]);
    expect(run?.answers.filter((a) => a.kind === 'models.invoke')).toHaveLength(1);
    expect(run?.results).toMatchObject({ status: 'completed', error: null, reply: 'done' });
  });

  it('replays to identical results in a fresh data dir with no model config, and --check passes', async () => {
    const { s, cassette, rec } = await recorded();
    const replay = await runWith(s, await freshDir(s, 'fresh'), [invoke('ping'), say('done'), done()], ['--replay', cassette, '--check']);
    expect(replay.exitCode, replay.stderr).toBe(0);
    expect(messages(replay.stdout)).toEqual(messages(rec.stdout));
    expect(parseLines<Line>(replay.stdout).at(-1)).toMatchObject({ type: 'run.summary', status: 'completed' });
  });

  it('a changed runner reply fails --check with exit 1 and a readable diff', async () => {
    const { s, cassette } = await recorded();
    const r = await runWith(s, await freshDir(s, 'fresh'), [invoke('ping'), say('changed'), done()], ['--replay', cassette, '--check']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('lbot: error[replay.mismatch]: replay found results that differ from the cassette');
    expect(r.stderr).toContain('run 1 (event ev-1): results changed');
    expect(r.stderr).toMatch(/- +"content": "done",/);
    expect(r.stderr).toMatch(/\+ +"content": "changed",/);
    expect(r.stderr).toMatch(/- +"reply": "done",/);
    expect(errorOf(r.stdout)).toMatchObject({ code: 'replay.mismatch' });
    const without = await runWith(s, await freshDir(s, 'fresh2'), [invoke('ping'), say('changed'), done()], ['--replay', cassette]);
    expect(without.exitCode).toBe(0);
  });

  it('a model request the cassette does not hold fails with replay.mismatch and a diff of the request', async () => {
    const { s, cassette } = await recorded();
    const r = await runWith(s, await freshDir(s, 'fresh'), [invoke('pong'), say('done'), done()], ['--replay', cassette]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('run 1: models.invoke: the cassette holds no models.invoke call with this request');
    expect(r.stderr).toMatch(/- +"content": "ping",/);
    expect(r.stderr).toMatch(/\+ +"content": "pong",/);
    // The runner saw a refusal, not a real model answer.
    expect(messages(r.stdout)[0]).toContain('"reason":"replay_mismatch"');
    const extra = await runWith(s, await freshDir(s, 'fresh2'), [invoke('ping'), invoke('ping'), done()], ['--replay', cassette]);
    expect(extra.exitCode).toBe(1);
    expect(extra.stderr).toContain('the cassette holds 1 models.invoke call(s) for this run and all were used');
  });

  it('editing the runner code to change its reply fails --check', async () => {
    const s = await scenario();
    await s.writeConfig({ models: [{ id: 'm-fake', provider: 'fake', reply: 'FAKE_PONG' }] });
    const body = (prefix: string) =>
      `const r = await api.request('models.invoke', { run_id: ctx.run_id, model_id: 'm-fake', messages: [{ role: 'user', content: ctx.input.text }] });\nyield message(${JSON.stringify(prefix)} + r.message.content);\nyield completed();`;
    const runner = await s.addPlugin('modelbot', { mainJs: probe(body('model said ')) });
    const bindingFile = await s.writeJson('bot-binding.json', { ...binding, runner_id: runner });
    const cassette = path.join(s.root, 'bot.json');
    const args = (dataDir: string, extra: string[]) => [
      '--data-dir',
      dataDir,
      '--plugins',
      s.plugins.pluginsDir,
      '--json',
      'run',
      '--event',
      eventPath('msg.json'),
      '--binding',
      bindingFile,
      ...extra,
    ];
    const rec = await s.lbot(args(s.dataDir, ['--record', cassette]), { globals: false });
    expect(rec.exitCode, rec.stderr).toBe(0);
    expect(messages(rec.stdout)).toEqual(['model said FAKE_PONG']);
    const same = await s.lbot(args(await freshDir(s, 'fresh'), ['--replay', cassette, '--check']), { globals: false });
    expect(same.exitCode, same.stderr).toBe(0);
    await writeFile(path.join(s.plugins.dir('modelbot'), 'main.js'), probe(body('the model answered ')));
    const changed = await s.lbot(args(await freshDir(s, 'fresh2'), ['--replay', cassette, '--check']), { globals: false });
    expect(changed.exitCode).toBe(1);
    expect(changed.stderr).toMatch(/- +"content": "model said FAKE_PONG",/);
    expect(changed.stderr).toMatch(/\+ +"content": "the model answered FAKE_PONG",/);
  });

  it('refuses --record with --replay, --check without --replay, and a missing cassette', async () => {
    const s = await scenario();
    const both = await runWith(s, s.dataDir, [done()], ['--record', 'a.json', '--replay', 'b.json']);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain('use either --record or --replay');
    const check = await runWith(s, s.dataDir, [done()], ['--check']);
    expect(check.exitCode).toBe(2);
    expect(check.stderr).toContain('--check compares with a cassette');
    const missing = await runWith(s, s.dataDir, [done()], ['--replay', path.join(s.root, 'none.json')]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('cannot read the cassette');
  });
});
