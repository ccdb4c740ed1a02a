// `lbot runner test` on real plugins (AC-178, AC-179): the scripted, echo, Python and scaffolded runners
// pass; each rule-breaking conformance fixture fails exactly the check named for it.
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_RUNNERS } from '../../helpers/plugins.js';
import { LBOT_BIN } from '../../helpers/serve.js';
import { sandboxSkipReason } from '../../helpers/sandbox.js';
import { withReason } from '../../helpers/skip.js';

type Check = { id: string; status: string; severity: string; evidence: string };
type Report = { ok: boolean; plugin: string | null; checks: Check[]; counts: Record<string, number> };

const CONFORMANCE = path.join(FIXTURE_RUNNERS, 'conformance');
const hasPython = (await execa('python3', ['--version'], { reject: false })).exitCode === 0;
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'lbot-runner-test-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function runnerTest(dir: string, ...args: string[]): Promise<{ exitCode: number; report: Report; stderr: string }> {
  const r = await execa(process.execPath, [LBOT_BIN, '--json', 'runner', 'test', dir, '--init-timeout', '5000', ...args], {
    reject: false,
    cwd: tmp,
    env: { LBOT_HOME: undefined },
  });
  return { exitCode: r.exitCode ?? -1, report: JSON.parse(r.stdout) as Report, stderr: r.stderr };
}

const failing = (r: Report) => r.checks.filter((c) => c.status === 'fail').map((c) => c.id);
const statusOf = (r: Report, id: string) => r.checks.find((c) => c.id === id)?.status;

const NO_PYTHON = !hasPython && 'python3 is missing, and it is the real XML parser (ElementTree) these checks use';

/** Parses XML with Python's ElementTree (a real parser); the tests calling it are skipped without python3. */
async function parseXml(file: string): Promise<{ tests: number; failures: number; names: string[] }> {
  const script =
    'import sys, json, xml.etree.ElementTree as E\nr = E.parse(sys.argv[1]).getroot()\nprint(json.dumps({"tests": int(r.get("tests")), "failures": int(r.get("failures")), "names": [c.get("name") for c in r.iter("testcase")]}))';
  const r = await execa('python3', ['-c', script, file]);
  return JSON.parse(r.stdout) as { tests: number; failures: number; names: string[] };
}

describe('AC-178 conformance pass', () => {
  it('the scripted fixture passes every required check, as JSON and as JUnit XML', async () => {
    const junit = path.join(tmp, 'out.xml');
    const { exitCode, report } = await runnerTest(path.join(FIXTURE_RUNNERS, 'scripted'), '--junit', junit);
    expect(exitCode, JSON.stringify(report, null, 2)).toBe(0);
    expect(report.ok).toBe(true);
    for (const id of [
      'manifest.valid',
      'components.valid',
      'runner.id_format',
      'initialize.handshake',
      'run.terminal_result',
      'stdout.protocol_only',
      'cancel.honoured',
      'deadline.honoured',
      'api.authorized',
      'api.own_run_id',
    ]) {
      expect(statusOf(report, id), id).toBe('pass');
    }
    expect(report.checks.every((c) => ['pass', 'n/a'].includes(c.status))).toBe(true);
    const xml = await readFile(junit, 'utf8');
    expect(xml).toContain('<testsuites name="lbot runner test"');
  });

  it.skipIf(!hasPython)(withReason('the passing JUnit XML parses with a real XML parser: one testcase per check, no failures', NO_PYTHON), async () => {
    const junit = path.join(tmp, 'out-parsed.xml');
    const { exitCode, report } = await runnerTest(path.join(FIXTURE_RUNNERS, 'scripted'), '--junit', junit);
    expect(exitCode, JSON.stringify(report, null, 2)).toBe(0);
    const parsed = await parseXml(junit);
    expect(parsed).toEqual({ tests: report.checks.length, failures: 0, names: report.checks.map((c) => c.id) });
  });

  it('the echo fixture passes and the text report lists every check', async () => {
    const r = await execa(process.execPath, [LBOT_BIN, 'runner', 'test', path.join(FIXTURE_RUNNERS, 'echo')], { reject: false, env: { LBOT_HOME: undefined } });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^PASS +manifest\.valid/m);
    expect(r.stdout).toMatch(/^PASS +shutdown\.idle/m);
    expect(r.stdout).toContain('acme/echo: ');
  });

  it.skipIf(!hasPython)(withReason('the Python stdlib runner passes, streaming checks included', !hasPython && 'python3 is missing'), async () => {
    const { exitCode, report } = await runnerTest(path.join(FIXTURE_RUNNERS, 'python-echo'));
    expect(exitCode, JSON.stringify(report.checks)).toBe(0);
    expect(statusOf(report, 'streaming.consistent')).toBe('pass');
  });
  if (!hasPython) console.warn('python3 is missing: the python-echo conformance test is skipped');

  it('variant: a fresh scaffold passes untouched', async () => {
    const scaffold = await execa(process.execPath, [LBOT_BIN, 'runner', 'scaffold', 'my-runner', '--author', 'acme'], {
      reject: false,
      cwd: tmp,
      env: { LBOT_HOME: undefined },
    });
    expect(scaffold.exitCode, scaffold.stderr).toBe(0);
    const { exitCode, report } = await runnerTest('my-runner');
    expect(exitCode, JSON.stringify(report.checks)).toBe(0);
    expect(report.plugin).toBe('acme/my-runner');
  });
});

describe('every runner fixture passes under plugins.isolation sandbox', () => {
  const skip = sandboxSkipReason();
  for (const fixture of ['echo', 'scripted', 'python-echo']) {
    const reason = skip ?? (fixture === 'python-echo' && !hasPython ? 'python3 is missing' : null);
    it.skipIf(reason !== null)(withReason(`${fixture} passes lbot runner test --isolation sandbox`, reason), async () => {
      const { exitCode, report } = await runnerTest(path.join(FIXTURE_RUNNERS, fixture), '--isolation', 'sandbox');
      expect(exitCode, JSON.stringify(report, null, 2)).toBe(0);
      expect(failing(report)).toEqual([]);
    });
  }
  it.skipIf(skip !== null)(withReason('a fresh scaffold passes lbot runner test --isolation sandbox', skip), async () => {
    const scaffold = await execa(process.execPath, [LBOT_BIN, 'runner', 'scaffold', 'sandboxed-runner', '--author', 'acme'], {
      reject: false,
      cwd: tmp,
      env: { LBOT_HOME: undefined },
    });
    expect(scaffold.exitCode, scaffold.stderr).toBe(0);
    const { exitCode, report } = await runnerTest(path.join(tmp, 'sandboxed-runner'), '--isolation', 'sandbox');
    expect(exitCode, JSON.stringify(report, null, 2)).toBe(0);
  });
  it.skipIf(skip !== null)(withReason('a plugin that leaves a process behind still fails process.no_leftovers', skip), async () => {
    const { report } = await runnerTest(path.join(CONFORMANCE, 'leaves-process'), '--isolation', 'sandbox');
    expect(failing(report)).toEqual(['process.no_leftovers']);
    expect(report.checks.find((c) => c.id === 'process.no_leftovers')?.evidence).toMatch(/sleep 600/);
  });
});

describe('AC-179 conformance failures', () => {
  const cases: Array<[string, string]> = [
    ['no-terminal', 'run.terminal_result'],
    ['stdout-debug', 'stdout.protocol_only'],
    ['ignores-cancel', 'cancel.honoured'],
    ['stack-trace', 'stdout.protocol_only'],
    ['foreign-run-id', 'api.own_run_id'],
    ['foreign-result', 'results.well_formed'],
    ['no-initialize', 'initialize.handshake'],
    ['overruns-deadline', 'run.terminal_result'],
  ];
  it.each(cases)('%s fails exactly %s and exits 1', async (fixture, check) => {
    // A runner that overruns every deadline gets short ones, so its probes end quickly.
    const { exitCode, report } = await runnerTest(path.join(CONFORMANCE, fixture), ...(fixture === 'overruns-deadline' ? ['--probe-timeout', '2'] : []));
    expect(exitCode).toBe(1);
    expect(failing(report)).toEqual([check]);
    expect(report.checks.find((c) => c.id === check)?.evidence).not.toBe('');
    if (fixture === 'foreign-result') expect(report.checks.find((c) => c.id === check)?.evidence).toMatch(/unknown run not-/);
    if (fixture === 'overruns-deadline') expect(report.checks.find((c) => c.id === check)?.evidence).toMatch(/ran past its \d+ s deadline/);
  });

  const noProc = existsSync('/proc/self/stat') ? null : 'no /proc to observe the process tree';
  it.skipIf(noProc !== null)(withReason('leaves-process fails exactly process.no_leftovers, names the left process and kills it', noProc), async () => {
    const { exitCode, report } = await runnerTest(path.join(CONFORMANCE, 'leaves-process'));
    expect(exitCode).toBe(1);
    expect(failing(report)).toEqual(['process.no_leftovers']);
    const evidence = report.checks.find((c) => c.id === 'process.no_leftovers')?.evidence ?? '';
    expect(evidence).toMatch(/pid \d+ \(sleep 600\)/);
    // The suite killed what the plugin left behind.
    const pids = [...evidence.matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) expect(existsSync(`/proc/${pid}`) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep')).toBe(false);
  });

  it('an undeclared result type is a warning: exit 0, and exit 1 with --strict', async () => {
    const dir = path.join(CONFORMANCE, 'undeclared-result');
    const lenient = await runnerTest(dir);
    expect(lenient.exitCode).toBe(0);
    expect(failing(lenient.report)).toEqual(['results.declared']);
    expect(lenient.report.checks.find((c) => c.id === 'results.declared')).toMatchObject({
      severity: 'warning',
      evidence: expect.stringContaining('custom.progress'),
    });
    const strict = await runnerTest(dir, '--strict');
    expect(strict.exitCode).toBe(1);
    expect(strict.report.ok).toBe(false);
  });

  it('names the failing check in text mode and in JUnit XML', async () => {
    const junit = path.join(tmp, 'fail.xml');
    const r = await execa(process.execPath, [LBOT_BIN, 'runner', 'test', path.join(CONFORMANCE, 'no-terminal'), '--junit', junit], {
      reject: false,
      env: { LBOT_HOME: undefined },
    });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(/^FAIL +run\.terminal_result +probe message/m);
    expect(r.stdout).toContain('failing: run.terminal_result');
    const xml = await readFile(junit, 'utf8');
    expect(xml).toMatch(/<testcase [^>]*name="run\.terminal_result"[^>]*>\s*<failure /);
  });

  it.skipIf(!hasPython)(withReason('the failing JUnit XML parses with a real XML parser and counts one failure', NO_PYTHON), async () => {
    const junit = path.join(tmp, 'fail-parsed.xml');
    const r = await execa(process.execPath, [LBOT_BIN, 'runner', 'test', path.join(CONFORMANCE, 'no-terminal'), '--junit', junit], {
      reject: false,
      env: { LBOT_HOME: undefined },
    });
    expect(r.exitCode).toBe(1);
    const parsed = await parseXml(junit);
    expect(parsed.failures).toBe(1);
    expect(parsed.names).toContain('run.terminal_result');
  });

  it('a directory without a plugin fails manifest.valid; a missing one is a usage error', async () => {
    const empty = await runnerTest(tmp);
    expect(empty.exitCode).toBe(1);
    expect(failing(empty.report)).toEqual(['manifest.valid']);
    const missing = await execa(process.execPath, [LBOT_BIN, 'runner', 'test', path.join(tmp, 'nope')], { reject: false });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('is not a plugin directory');
    expect(existsSync(path.join(tmp, 'nope'))).toBe(false);
  });
});
