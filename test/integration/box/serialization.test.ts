// A session runs one command at a time (box.md §5.1): execs and process starts queue on a per-session
// lock shared by every lbot process; different sessions keep running side by side.
import { chownSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { boxFixture, bwrapSkipReason, disposeFixture, type BoxFixture } from './helpers.js';

const fixtures: BoxFixture[] = [];
const temps: string[] = [];
afterEach(async () => {
  for (const f of fixtures.splice(0)) await disposeFixture(f);
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(bwrapSkipReason !== null)(`box session serialisation${bwrapSkipReason ? ` (skipped: ${bwrapSkipReason})` : ''}`, () => {
  it('runs two execs of one session one after the other, never interleaved', async () => {
    const f = boxFixture();
    fixtures.push(f);
    await f.box.exec({ session_id: 'one', cmd: ': > /tmp/log' });
    const step = (name: string) => f.box.exec({ session_id: 'one', cmd: `echo ${name}-start >> /tmp/log; sleep 0.5; echo ${name}-end >> /tmp/log` });
    await Promise.all([
      step('a'),
      step('b'),
      f.box.startProcess('one', { process_id: 'p', command: 'sh', args: ['-c', "printf 'p-start\\np-end\\n' >> /tmp/log; sleep 60"] }),
    ]);
    // The managed process writes its lines after its start returned: wait for them (bounded).
    let lines: string[] = [];
    for (let i = 0; i < 50 && lines.length < 6; i++) {
      const { result } = await f.box.exec({ session_id: 'one', cmd: 'cat /tmp/log' });
      lines = result.stdout.trim().split('\n');
      if (lines.length < 6) await new Promise((r) => setTimeout(r, 100));
    }
    expect(lines).toHaveLength(6);
    // Every start is followed directly by its own end.
    for (let i = 0; i < lines.length; i += 2) expect(lines[i + 1]).toBe((lines[i] ?? '').replace('-start', '-end'));
  });

  it('keeps different sessions parallel: one waits for a file only the other creates', async () => {
    const ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'lbot-par-')));
    temps.push(ws);
    if (process.getuid?.() === 0) chownSync(ws, 65532, 65532);
    const f = boxFixture({ allowed_mount_roots: [ws] });
    fixtures.push(f);
    const waiter = f.box.exec({ session_id: 's1', host_path: ws, timeout_sec: 20, cmd: 'while [ ! -e /workspace/go ]; do sleep 0.05; done; echo released' });
    const maker = f.box.exec({ session_id: 's2', host_path: ws, cmd: 'sleep 0.3; touch /workspace/go' });
    const [w] = await Promise.all([waiter, maker]);
    expect(w.result).toMatchObject({ status: 'completed', stdout: 'released\n' });
    expect(readFileSync(path.join(ws, 'go'), 'utf8')).toBe('');
  });
});
