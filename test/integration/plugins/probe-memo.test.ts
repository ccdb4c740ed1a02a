// The sandbox probe memo (src/runtime/plugins/probe-memo.ts): a successful probe is remembered in the data
// dir under a key of everything its outcome depends on; a changed fact, a tampered memo or a sandboxed
// plugin exiting with a failure makes the next process probe again.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/core/config.js';
import { probeKey } from '../../../src/runtime/plugins/probe-memo.js';
import { PluginSandbox } from '../../../src/runtime/plugins/sandbox.js';
import { sandboxSkipReason } from '../../helpers/sandbox.js';
import { withReason } from '../../helpers/skip.js';

const limits = ConfigSchema.parse({}).plugins.limits;
const skip = sandboxSkipReason();

describe('probeKey', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-probe-key-'));
  const tool = path.join(dir, 'bwrap');
  writeFileSync(tool, 'v1');
  const facts = { tools: [tool], plan: { mode: 'cgroup' }, filter: Buffer.from([1, 2, 3]), runAs: { uid: 65532, gid: 65532 } };

  it('is stable for the same facts and changes with each of them', () => {
    const key = probeKey(facts);
    expect(probeKey(facts)).toBe(key);
    expect(probeKey({ ...facts, plan: { mode: 'rlimit' } })).not.toBe(key);
    expect(probeKey({ ...facts, filter: Buffer.from([1, 2, 4]) })).not.toBe(key);
    expect(probeKey({ ...facts, runAs: null })).not.toBe(key);
    expect(probeKey({ ...facts, tools: [path.join(dir, 'missing')] })).not.toBe(key);
    utimesSync(tool, new Date(2001, 1, 1), new Date(2001, 1, 1));
    expect(probeKey(facts)).not.toBe(key);
  });
});

describe.skipIf(skip !== null)(withReason('the probe memo of a real sandbox', skip), () => {
  const sandbox = (dataDir: string, bwrapBin: string) => new PluginSandbox({ mode: 'sandbox', dataDir, limits, bwrapBin, warn: () => undefined });
  const bwrap = spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim();

  it('a probe that succeeds leaves a private memo; a tampered one is probed again and rewritten', () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-probe-memo-'));
    const memo = path.join(dataDir, 'plugin-sandbox', 'probe.json');
    expect(sandbox(dataDir, 'bwrap').resolve().isolation).toBe('sandbox');
    const key = readFileSync(memo, 'utf8');
    expect(JSON.parse(key)).toEqual({ key: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(statSync(memo).mode & 0o777).toBe(0o600);
    writeFileSync(memo, JSON.stringify({ key: 'forged' }));
    // The same binary by its full path: a new probe in this process, the same facts, so the same key.
    expect(sandbox(dataDir, bwrap).resolve().isolation).toBe('sandbox');
    expect(readFileSync(memo, 'utf8')).toBe(key);
  });

  it('a sandboxed process exiting with a failure drops the memo', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-probe-memo-'));
    const memo = path.join(dataDir, 'plugin-sandbox', 'probe.json');
    const first = sandbox(dataDir, bwrap);
    expect(first.resolve().isolation).toBe('sandbox');
    const launch = first.wrap({ file: '/bin/sh', args: ['-c', 'exit 3'] }, { identity: 'acme/failing', dir: '/usr', network: false }, {});
    expect(launch).not.toBeNull();
    if (!launch) return;
    const r = spawnSync(launch.file, launch.args, { env: launch.env, stdio: 'ignore' });
    expect(r.status).toBe(3);
    expect(existsSync(memo)).toBe(true);
    launch.settle(r.status);
    expect(existsSync(memo)).toBe(false);
  });
});
