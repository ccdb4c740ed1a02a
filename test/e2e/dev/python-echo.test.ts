// The Python stdlib runner (fixtures/runners/python-echo) through `lbot run`: the protocol is language-neutral.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FIXTURE_EVENTS, FIXTURE_RUNNERS } from '../../helpers/plugins.js';
import { LBOT_BIN } from '../../helpers/serve.js';
import { withReason } from '../../helpers/skip.js';

const hasPython = (await execa('python3', ['--version'], { reject: false })).exitCode === 0;
if (!hasPython) console.warn('python3 is missing: the python-echo run tests are skipped');

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-python-echo-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const run = (event: string, extra: string[] = []) =>
  execa(
    process.execPath,
    [LBOT_BIN, '--data-dir', dataDir, ...extra, 'run', '--event', path.join(FIXTURE_EVENTS, event), '--plugin', path.join(FIXTURE_RUNNERS, 'python-echo')],
    { reject: false, env: { LBOT_HOME: undefined } },
  );

describe.skipIf(!hasPython)(withReason('python-echo via lbot run', !hasPython && 'python3 is missing'), () => {
  it('streams a cumulative delta, then the message, and exits 0', async () => {
    const r = await run('msg.json', ['--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.type)).toEqual(['message.delta', 'message.completed', 'run.summary']);
    expect(lines[1]).toMatchObject({ data: { message: { content: 'ping' } } });
    expect(lines[2]).toMatchObject({ runner_id: 'plugin:acme/python-echo/default', status: 'completed' });
  });

  it('answers a non-message event and a sequence of events in order', async () => {
    const join = await run('join.json');
    expect(join.exitCode, join.stderr).toBe(0);
    expect(join.stdout.trim()).toBe('received group.member_joined from u2');
    const seq = await run('seq.json');
    expect(seq.exitCode, seq.stderr).toBe(0);
    expect(seq.stdout.trim().split('\n')).toEqual(['remember BLUE', 'what colour?']);
  });
});
