// `lbot binding` and run_policy: set by flag or file, validated, shown by list and show (docs/run-policy.md).
import { describe, expect, it } from 'vitest';
import { scenario, SCRIPTED } from './host/harness.js';

describe('lbot binding run_policy', () => {
  it('is enqueue by default, set by --run-policy or the file, shown by list and show, refused when unknown', async () => {
    const s = await scenario();
    const plain = await s.lbot(['--json', 'binding', 'add', '--id', 'plain', '--runner', SCRIPTED]);
    expect(plain.exitCode, plain.stderr).toBe(0);
    expect(JSON.parse(plain.stdout)).toMatchObject({ binding_id: 'plain', run_policy: 'enqueue' });
    const flag = await s.lbot(['binding', 'add', '--id', 'busy', '--runner', SCRIPTED, '--run-policy', 'reject']);
    expect(flag.exitCode, flag.stderr).toBe(0);
    expect(flag.stdout).toContain('run_policy reject');
    const file = await s.writeJson('b.json', { binding_id: 'cut', runner_id: SCRIPTED, run_policy: 'interrupt' });
    expect((await s.lbot(['binding', 'add', file])).exitCode).toBe(0);

    const show = await s.lbot(['--json', 'binding', 'show', 'cut']);
    expect(JSON.parse(show.stdout)).toMatchObject({ binding_id: 'cut', run_policy: 'interrupt' });
    const list = await s.lbot(['binding', 'list']);
    expect(list.stdout).toMatch(/plain .*run_policy enqueue/);
    expect(list.stdout).toMatch(/busy .*run_policy reject/);

    const badFlag = await s.lbot(['--json', 'binding', 'add', '--id', 'x', '--runner', SCRIPTED, '--run-policy', 'queue']);
    expect(badFlag.exitCode).toBe(2);
    expect(JSON.parse(badFlag.stdout)).toMatchObject({ ok: false, error: { code: 'invalid_argument' } });
    expect(badFlag.stderr).toContain('--run-policy');
    const badFile = await s.writeJson('bad.json', { binding_id: 'y', runner_id: SCRIPTED, run_policy: 'sometimes' });
    const refused = await s.lbot(['binding', 'add', badFile]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('run_policy');
    expect((await s.lbot(['binding', 'add', '--help'])).stdout).toContain('--run-policy');
  });
});
