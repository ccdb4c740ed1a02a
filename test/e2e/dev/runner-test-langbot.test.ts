// `lbot runner test` on a LangBot SDK plugin (fixtures/runners/langbot-wire) through the built CLI: the
// fixture passes, and each planted wire violation (its `wire_mode` file) fails the check named for it.
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_RUNNERS } from '../../helpers/plugins.js';
import { LBOT_BIN } from '../../helpers/serve.js';
import { withReason } from '../../helpers/skip.js';

type Check = { id: string; status: string; evidence: string };
type Report = { ok: boolean; plugin: string | null; checks: Check[] };

const hasPython = (await execa('python3', ['--version'], { reject: false })).exitCode === 0;
const MODES = ['pass', 'no-end', 'no-terminal', 'malformed'] as const;
type Mode = (typeof MODES)[number];
const results = new Map<Mode, { exitCode: number; report: Report }>();
let tmp: string;

async function runnerTest(mode: Mode): Promise<{ exitCode: number; report: Report }> {
  // One parent per copy: the suite reads the plugin's parent directory, where the identity must be unique.
  const dir = path.join(tmp, mode, 'wire-agent');
  await cp(path.join(FIXTURE_RUNNERS, 'langbot-wire'), dir, { recursive: true });
  if (mode !== 'pass') await writeFile(path.join(dir, 'wire_mode'), mode);
  const r = await execa(process.execPath, [LBOT_BIN, '--json', 'runner', 'test', dir, '--init-timeout', '10000'], {
    reject: false,
    cwd: tmp,
    env: { LBOT_HOME: undefined },
  });
  return { exitCode: r.exitCode ?? -1, report: JSON.parse(r.stdout) as Report };
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'lbot-runner-test-langbot-'));
  if (!hasPython) return;
  // The four suites mostly wait (grace periods), so they run side by side.
  const done = await Promise.all(MODES.map(async (m) => [m, await runnerTest(m)] as const));
  for (const [m, r] of done) results.set(m, r);
}, 120_000);
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const failing = (r: Report) => r.checks.filter((c) => c.status === 'fail').map((c) => c.id);
const check = (r: Report, id: string) => r.checks.find((c) => c.id === id);
const get = (m: Mode) => {
  const r = results.get(m);
  if (!r) throw new Error(`no report for ${m}`);
  return r;
};

describe.skipIf(!hasPython)(withReason('lbot runner test on a LangBot SDK plugin', !hasPython && 'python3 is missing'), () => {
  it('the fixture passes every check; its LangBot-only declarations are noted, not failures', () => {
    const { exitCode, report } = get('pass');
    expect(exitCode, JSON.stringify(report.checks, null, 2)).toBe(0);
    expect(report.plugin).toBe('lbot-fixtures/wire-agent');
    expect(failing(report)).toEqual([]);
    for (const id of [
      'initialize.handshake',
      'run.terminal_result',
      'run.answered',
      'cancel.honoured',
      'streaming.consistent',
      'shutdown.idle',
      'process.no_leftovers',
    ]) {
      expect(check(report, id)?.status, id).toBe('pass');
    }
    expect(check(report, 'components.valid')?.evidence).toMatch(/set aside: .*capabilities\.skill_authoring/);
  });

  it('a run_agent stream that never ends fails run.answered (and cancel.honoured)', () => {
    const { exitCode, report } = get('no-end');
    expect(exitCode).toBe(1);
    expect(failing(report)).toEqual(['run.answered', 'cancel.honoured']);
    expect(check(report, 'run.answered')?.evidence).toMatch(/probe message .*never answered the run/);
  });

  it('a stream ended without run.completed or run.failed fails run.terminal_result', () => {
    const { exitCode, report } = get('no-terminal');
    expect(exitCode).toBe(1);
    expect(failing(report)).toEqual(['run.terminal_result']);
  });

  it('a malformed response frame breaks the channel: stdout.protocol_only fails with the frame quoted', () => {
    const { exitCode, report } = get('malformed');
    expect(exitCode).toBe(1);
    expect(failing(report)).toEqual(['stdout.protocol_only']);
    expect(check(report, 'stdout.protocol_only')?.evidence).toMatch(/broke the LangBot wire: a malformed response frame: \{"seq_id"/);
  });
});
