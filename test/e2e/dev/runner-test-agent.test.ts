// `lbot runner test --agent` through the built CLI: the bundled local agent passes the agent checks against
// the fake model server, and each planted bad agent fails exactly the agent check it breaks.
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_RUNNERS, REPO_ROOT } from '../../helpers/plugins.js';
import { LBOT_BIN } from '../../helpers/serve.js';

type Check = { id: string; status: string; evidence: string };
type Report = { ok: boolean; plugin: string | null; checks: Check[] };

const CONFORMANCE = path.join(FIXTURE_RUNNERS, 'conformance');
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'lbot-runner-test-agent-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function runnerTest(dir: string): Promise<{ exitCode: number; report: Report; stderr: string }> {
  const r = await execa(process.execPath, [LBOT_BIN, '--json', 'runner', 'test', dir, '--agent'], { reject: false, cwd: tmp, env: { LBOT_HOME: undefined } });
  return { exitCode: r.exitCode ?? -1, report: JSON.parse(r.stdout) as Report, stderr: r.stderr };
}

const failing = (r: Report) => r.checks.filter((c) => c.status === 'fail').map((c) => c.id);
const check = (r: Report, id: string) => r.checks.find((c) => c.id === id);

describe('lbot runner test --agent', () => {
  it('the local agent passes every protocol check and the three agent checks', async () => {
    const { exitCode, report, stderr } = await runnerTest(path.join(REPO_ROOT, 'runners', 'local-agent'));
    expect(exitCode, JSON.stringify(report.checks, null, 2) + stderr).toBe(0);
    expect(report.plugin).toBe('langbot/local-agent');
    expect(failing(report)).toEqual([]);
    expect(check(report, 'agent.tool_result')).toMatchObject({ status: 'pass', evidence: expect.stringContaining('answering call_conformance_lookup') });
    expect(check(report, 'agent.iteration_cap')).toMatchObject({
      status: 'pass',
      evidence: expect.stringContaining('max-tool-iterations 2 (set by the check)'),
    });
    expect(check(report, 'agent.iteration_cap')?.evidence).toContain('limit of 2 tool-call rounds');
    expect(check(report, 'agent.refused_tool')).toMatchObject({ status: 'pass', evidence: expect.stringContaining('the run ended completed') });
  });

  it.each([
    ['agent-ignores-tool-results', 'agent.tool_result', /does not hold the tool's result \(conformance-[0-9a-f]+ missing from "ok"\)/],
    ['agent-crashes-on-refused-tool', 'agent.refused_tool', /never got the refusals of conformance_ungranted .*runner\.exception: "tools\.call: unauthorized/],
  ])('%s fails exactly %s with a clear message', async (fixture, id, message) => {
    const { exitCode, report } = await runnerTest(path.join(CONFORMANCE, fixture));
    expect(exitCode).toBe(1);
    expect(failing(report)).toEqual([id]);
    expect(check(report, id)?.evidence).toMatch(message);
  });
});
