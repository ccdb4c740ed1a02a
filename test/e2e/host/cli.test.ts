// Acceptance §8, CLI (AC-170 … AC-172, AC-181 … AC-183) for `lbot run` and the host's commands.
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, done, emit, errorOf, eventPath, F_CFG_MODELS, list, parseLines, pick, reports, say, scenario, summaries } from './harness.js';

const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/** Every stdout line is JSON and each run ends with exactly one run.summary carrying the required keys. */
function expectMachineOutput(stdout: string, runs: number): void {
  const lines = parseLines(stdout);
  expect(lines.length).toBeGreaterThan(0);
  const sums = lines.filter((l) => l.type === 'run.summary');
  expect(sums).toHaveLength(runs);
  for (const sum of sums) for (const key of ['run_id', 'runner_id', 'status', 'error']) expect(sum).toHaveProperty(key);
  const perRun = new Map<unknown, number>();
  for (const sum of sums) perRun.set(sum.run_id, (perRun.get(sum.run_id) ?? 0) + 1);
  for (const n of perRun.values()) expect(n).toBe(1);
  // nothing of a run comes after its summary
  for (const [i, l] of lines.entries()) {
    if (l.type === 'run.summary' || l.run_id === undefined) continue;
    expect(lines.slice(0, i).some((x) => x.type === 'run.summary' && x.run_id === l.run_id)).toBe(false);
  }
}

describe('CLI', () => {
  it('AC-170 help, version and usage errors', async () => {
    const s = await scenario();
    const help = await s.lbot(['--help'], { globals: false });
    expect(help.exitCode, help.stderr).toBe(0);
    expect(help.stdout).toContain('run');
    const version = await s.lbot(['--version'], { globals: false });
    expect(version.exitCode, version.stderr).toBe(0);
    expect(version.stdout.trim()).toMatch(SEMVER);
    const unknown = await s.lbot(['frobnicate'], { globals: false });
    expect(unknown.exitCode, unknown.stderr).toBe(2);
    const noEvent = await s.lbot(['run'], { globals: false });
    expect(noEvent.exitCode, noEvent.stderr).toBe(2);
    expect(noEvent.stderr).toContain('--event');
    const runHelp = await s.lbot(['run', '--help'], { globals: false });
    expect(runHelp.exitCode, runHelp.stderr).toBe(0);
    expect(runHelp.stdout).toContain('--event');
  });

  it('AC-171 replaying a sequence', async () => {
    const s = await scenario();
    const r = await s.run([api('history.page'), done()], { json: true, event: 'seq.json' });
    expect(r.exitCode, r.stderr).toBe(0);
    const sums = summaries(r.stdout);
    expect(sums).toHaveLength(2);
    expect(sums.map((x) => x.event_id)).toEqual(['ev-a', 'ev-b']);
    const [, second] = reports(r.stdout);
    const contents = list(second, 'result.items').map((i) => pick(i, 'content'));
    expect(contents).toContain('remember BLUE');
    const runs = await s.jsonList(['runs', 'list']);
    expect(runs.map((x) => x.event_id)).toEqual(['ev-a', 'ev-b']);
    expectMachineOutput(r.stdout, 2);
  });

  it('AC-171 a failed run skips the rest of the sequence', async () => {
    const s = await scenario();
    const r = await s.run([emit('run.failed', { code: 'runner.error', error: 'first fails' })], { json: true, event: 'seq.json' });
    expect(r.exitCode, r.stderr).toBe(1);
    expect(summaries(r.stdout)).toHaveLength(1);
    const last = parseLines(r.stdout).at(-1);
    expect(last).toMatchObject({ skipped: 1 });
    expect((await s.jsonList(['runs', 'list'])).map((x) => x.event_id)).toEqual(['ev-a']);
    const text = await s.run([emit('run.failed', { code: 'runner.error', error: 'first fails' })], { event: 'seq.json' });
    expect(text.exitCode, text.stderr).toBe(1);
    expect(text.stderr).toMatch(/1 event.*skipped/);
  });

  it('AC-172 machine output', async () => {
    const s = await scenario();
    const ok = await s.run(
      [
        emit('message.delta', { chunk: { role: 'assistant', content: 'a' } }),
        say('ab'),
        emit('tool.call.started', { tool_call_id: 't', tool_name: 'x', parameters: {} }),
        done(),
      ],
      { json: true, verbose: true },
    );
    expect(ok.exitCode, ok.stderr).toBe(0);
    expectMachineOutput(ok.stdout, 1);
    const failed = await s.run([emit('run.failed', { error: 'boom' })], { json: true });
    expect(failed.exitCode, failed.stderr).toBe(1);
    expectMachineOutput(failed.stdout, 1);
    expect(summaries(failed.stdout)[0]).toMatchObject({ status: 'failed', error: { code: 'unknown' } });
    const usage = await s.run([say('x'), done()], { json: true, runner: 'plugin:acme/nope/default' });
    expect(usage.exitCode, usage.stderr).toBe(3);
    for (const line of usage.stdout.split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
    expect(errorOf(usage.stdout)).toMatchObject({ code: 'runner.not_found', retryable: false, details: expect.any(Object) });
  });

  it('AC-181 config overrides and display', async () => {
    const s = await scenario();
    await s.writeConfig({ box: { enabled: true }, models: F_CFG_MODELS });
    const shown = await s.lbot(['--json', 'config', 'show'], { env: { LBOT__BOX__ENABLED: 'false' } });
    expect(shown.exitCode, shown.stderr).toBe(0);
    const config = JSON.parse(shown.stdout) as unknown;
    expect(pick(config, 'box.enabled')).toBe(false);
    expect(shown.stdout).not.toContain('SECRET123');
    expect(pick(config, 'models.0.api_key')).not.toBe('sk-test-SECRET123');
    expect(pick(config, 'models.0.id')).toBe('m-fake');

    const file = path.join(s.dataDir, 'lbot.config.json');
    await writeFile(file, '{\n  "box": {\n    "enabled": true,\n  }\n}\n');
    for (const args of [
      ['config', 'show'],
      ['runs', 'list'],
      ['runner', 'list'],
      ['state', 'list'],
      ['run', '--event', eventPath('msg.json'), '--runner', 'plugin:acme/scripted/default'],
    ]) {
      const r = await s.lbot(['--json', ...args]);
      expect(r.exitCode, args.join(' ')).toBe(2);
      const err = errorOf(r.stdout);
      expect(err?.code, args.join(' ')).toBe('config.invalid');
      expect(String(err?.message), args.join(' ')).toContain(file);
      expect(String(err?.message), args.join(' ')).toMatch(/:4:\d+|line 4/);
    }
  });

  it('AC-182 importing legacy binding config', async () => {
    const s = await scenario();
    const old = await s.writeJson('old.json', {
      ai: { runner: { runner: 'local-agent', 'expire-time': 0 }, 'local-agent': { 'knowledge-base': 'kb1', 'max-round': 10, prompt: 'p' } },
    });
    const r = await s.lbot(['--json', 'binding', 'migrate', old]);
    expect(r.exitCode, r.stderr).toBe(0);
    const binding = JSON.parse(r.stdout) as unknown;
    expect(pick(binding, 'runner_id')).toBe('plugin:langbot/local-agent/default');
    expect(pick(binding, 'runner_config')).toEqual({ 'knowledge-bases': ['kb1'], prompt: 'p' });
    const none = await s.writeJson('none.json', { ai: { runner: { runner: 'local-agent' }, 'local-agent': { 'knowledge-base': '__none__' } } });
    const r2 = await s.lbot(['--json', 'binding', 'migrate', none]);
    expect(r2.exitCode, r2.stderr).toBe(0);
    expect(pick(JSON.parse(r2.stdout), 'runner_config.knowledge-bases')).toEqual([]);
    // the text form prints the same binding
    const text = await s.lbot(['binding', 'migrate', old]);
    expect(JSON.parse(text.stdout)).toEqual(binding);
  });

  it('AC-183 concurrent CLI runs', async () => {
    const s = await scenario();
    const base = JSON.parse(await readFile(eventPath('msg.json'), 'utf8')) as Record<string, unknown>;
    const c2 = await s.writeJson('c2.json', { ...base, event_id: `ev-${randomUUID()}`, conversation_id: 'c2' });
    // both runs write a few state keys too, so the two processes really overlap on the database
    const script = [
      ...Array.from({ length: 20 }, (_, i) => ({ api: { action: 'state.set', args: { scope: 'actor', key: `k${i}`, value: i } } })),
      say('ok'),
      done(),
    ];
    const [a, b] = await Promise.all([s.lbot(await s.runArgs(script)), s.lbot(await s.runArgs(script, { event: c2 }))]);
    expect(a.exitCode, a.stderr).toBe(0);
    expect(b.exitCode, b.stderr).toBe(0);
    for (const conv of ['c1', 'c2']) {
      const items = list(await s.page(['transcript', 'page', '--conversation', conv]), 'items');
      expect(items.map((i) => pick(i, 'role'))).toEqual(['user', 'assistant']);
    }
    expect(await s.jsonList(['runs', 'list'])).toHaveLength(2);
  });
});
