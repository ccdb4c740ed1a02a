// AC-176 and AC-177 against real `lbot serve --dev` and `lbot dev` processes editing real files: new runs
// use the new code and label, runs in flight finish on the old process, broken edits keep the last good
// version serving with reload_error in `lbot runner list --json`.
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempPlugins, FIXTURE_EVENTS, type TempPlugins } from '../../helpers/plugins.js';
import { LBOT_BIN, startServe, type ServeProcess } from '../../helpers/serve.js';
import { addHotPlugin, eventually, HOT, hotMain, msgEvent, replyOf, startLbot, type LiveProcess, gateIn } from './dev-helpers.js';

type Fixture = { dataDir: string; plugins: TempPlugins; serve?: ServeProcess; live?: LiveProcess };
const open: Fixture[] = [];

async function setup(): Promise<Fixture> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-dev-'));
  const plugins = await createTempPlugins([]);
  await addHotPlugin(plugins);
  const f: Fixture = { dataDir, plugins };
  open.push(f);
  return f;
}

afterEach(async () => {
  for (const f of open.splice(0)) {
    await f.serve?.stop('SIGTERM').catch(() => undefined);
    await f.live?.stop().catch(() => undefined);
    await rm(f.dataDir, { recursive: true, force: true });
    await f.plugins.cleanup();
  }
});

type RunnerRow = { id: string; label: Record<string, string>; reload_error: string | null };

async function runnerList(f: Fixture): Promise<RunnerRow[]> {
  const r = await execa(process.execPath, [LBOT_BIN, '--data-dir', f.dataDir, '--plugins', f.plugins.pluginsDir, '--json', 'runner', 'list'], {
    reject: false,
    env: { LBOT_HOME: undefined },
  });
  return JSON.parse(r.stdout) as RunnerRow[];
}

/** Starts a run and waits for it to end; returns its reply text. */
async function replyOfNewRun(s: ServeProcess): Promise<unknown> {
  const started = await s.request('POST', '/v1/runs', { event: await msgEvent(), runner_id: HOT });
  expect(started.status).toBe(202);
  return replyOf(await s.waitRun((started.json as { run_id: string }).run_id));
}

describe('hot reload (serve --dev)', () => {
  it('AC-176: new runs use the edited code and label; a run started before the edit finishes with v1', async () => {
    const f = await setup();
    const s = (f.serve = await startServe({ dataDir: f.dataDir, pluginsDir: f.plugins.pluginsDir, args: ['--dev'] }));
    expect(await replyOfNewRun(s)).toBe('v1');
    const gate = await gateIn(f.plugins.dir('hot'));
    // In a conversation of its own: under the default run_policy (enqueue) the new runs of its conversation would wait for it.
    const before = await s.request('POST', '/v1/runs', { event: { ...(await msgEvent()), conversation_id: 'c-held' }, runner_id: HOT, config: { gate } });
    const beforeId = (before.json as { run_id: string }).run_id;

    await writeFile(path.join(f.plugins.dir('hot'), 'main.js'), hotMain('v2'));
    await f.plugins.editYaml('hot', 'components/agent_runner/default.yaml', (doc) => {
      Reflect.set(Reflect.get(doc, 'metadata') as object, 'label', { en_US: 'Hot v2' });
    });

    // Within 5 s a new run replies v2 and the list shows the new label (acceptance timing).
    const started = Date.now();
    await eventually(async () => ((await replyOfNewRun(s)) === 'v2' ? true : undefined), 5_000, 'a v2 reply');
    await eventually(
      async () => ((await runnerList(f)).find((r) => r.id === HOT)?.label.en_US === 'Hot v2' ? true : undefined),
      5_000 - (Date.now() - started),
      'the new label',
    );

    expect((await s.request('GET', `/v1/runs/${beforeId}`)).json).toMatchObject({ status: 'running' });
    await writeFile(gate, '');
    const old = await s.waitRun(beforeId);
    expect(old.status).toBe('completed');
    expect(replyOf(old)).toBe('v1');
    expect(s.proc.exitCode).toBeNull();
    expect(await s.stop()).toEqual({ exitCode: 0 });
    // Neither the old nor the new plugin process outlives serve.
    const left = await execa('pgrep', ['-f', f.plugins.dir('hot')], { reject: false });
    expect(left.stdout.trim()).toBe('');
  });

  it('AC-177: an invalid manifest keeps the last good version serving and shows reload_error until fixed', async () => {
    const f = await setup();
    const s = (f.serve = await startServe({ dataDir: f.dataDir, pluginsDir: f.plugins.pluginsDir, args: ['--dev'] }));
    await writeFile(path.join(f.plugins.dir('hot'), 'main.js'), hotMain('v2'));
    await eventually(async () => ((await replyOfNewRun(s)) === 'v2' ? true : undefined), 10_000, 'a v2 reply');

    const manifest = path.join(f.plugins.dir('hot'), 'manifest.yaml');
    const { readFile } = await import('node:fs/promises');
    const good = await readFile(manifest, 'utf8');
    await writeFile(manifest, 'apiVersion: langbot/v1\nkind: Plugin\nmetadata: [author: acme\n');

    const broken = await eventually(async () => (await runnerList(f)).find((r) => r.id === HOT && r.reload_error !== null), 10_000, 'reload_error');
    expect(broken.reload_error).toContain('manifest.yaml is not valid YAML');
    expect(broken.reload_error).toMatch(/line \d+, column \d+/);
    expect(broken.label.en_US).toBe('Hot v1');
    expect(await replyOfNewRun(s)).toBe('v2');

    await writeFile(manifest, good);
    await eventually(async () => ((await runnerList(f)).find((r) => r.id === HOT)?.reload_error === null ? true : undefined), 10_000, 'the error cleared');
    expect(await replyOfNewRun(s)).toBe('v2');
  });

  it('code that fails to start keeps the old process serving; fixing it reloads', async () => {
    const f = await setup();
    const s = (f.serve = await startServe({ dataDir: f.dataDir, pluginsDir: f.plugins.pluginsDir, args: ['--dev'] }));
    const main = path.join(f.plugins.dir('hot'), 'main.js');
    await writeFile(main, 'export default {{ not javascript');
    const broken = await eventually(async () => (await runnerList(f)).find((r) => r.id === HOT && r.reload_error !== null), 10_000, 'reload_error');
    expect(broken.reload_error).toContain('before answering initialize');
    expect(broken.reload_error).toContain('SyntaxError');
    // Where the syntax error is: the file and line, the source line, and a caret under the column.
    expect(broken.reload_error).toMatch(/hot\/main\.js:1\nexport default \{\{ not javascript\n\s*\^/);
    expect(await replyOfNewRun(s)).toBe('v1');
    await writeFile(main, hotMain('v3'));
    await eventually(async () => ((await replyOfNewRun(s)) === 'v3' ? true : undefined), 10_000, 'a v3 reply');
    expect((await runnerList(f)).find((r) => r.id === HOT)?.reload_error).toBeNull();
  });
});

describe('lbot dev', () => {
  it('serves a plugins dir warm, reports reloads as NDJSON, and runs --event at start', async () => {
    const f = await setup();
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
      path.join(FIXTURE_EVENTS, 'msg.json'),
    ]));
    const ready = await live.waitLine((l) => l.type === 'serve.ready');
    expect(ready).toMatchObject({ dev: true });
    await live.waitLine((l) => l.type === 'dev.ready');
    const reply = await live.waitLine((l) => l.type === 'message.completed');
    expect(reply).toMatchObject({ data: { message: { content: 'v1' } } });
    const first = await live.waitLine((l) => l.type === 'run.summary');
    expect(first).toMatchObject({ status: 'completed' });

    await writeFile(path.join(f.plugins.dir('hot'), 'main.js'), hotMain('v2'));
    const reloaded = await live.waitLine((l) => l.type === 'dev.reloaded' && l.generation === 2);
    expect(reloaded).toMatchObject({ plugin: 'acme/hot' });
    expect(await live.stop()).toBe(0);
  });

  it('serves one plugin directory and prints plain log lines off a TTY without --json', async () => {
    const f = await setup();
    const proc = execa(
      process.execPath,
      [LBOT_BIN, '--data-dir', f.dataDir, 'dev', f.plugins.dir('hot'), '--port', '0', '--event', path.join(FIXTURE_EVENTS, 'msg.json')],
      { reject: false, buffer: false, stdin: 'ignore', env: { LBOT_HOME: undefined } },
    );
    let err = '';
    proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const stop = async () => {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      return (await proc).exitCode;
    };
    f.live = { proc, lines: [], stderr: () => err, waitLine: () => Promise.reject(new Error('unused')), stop };
    await eventually(async () => (err.includes('completed') ? true : undefined), 20_000, 'the first run');
    expect(err).toMatch(/lbot: dev: serving acme\/hot on http:\/\/127\.0\.0\.1:\d+/);
    expect(err).toContain('lbot: run ');
    expect(err).toMatch(/lbot: run [0-9a-f-]+: v1/);
    const list = await execa(process.execPath, [LBOT_BIN, '--data-dir', f.dataDir, '--json', 'runner', 'list', '--plugin', f.plugins.dir('hot')], {
      reject: false,
      env: { LBOT_HOME: undefined },
    });
    expect(JSON.parse(list.stdout)).toMatchObject([{ id: HOT, reload_error: null }]);
    expect(await f.live.stop()).toBe(0);
  });
});
