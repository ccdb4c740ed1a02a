// Durable sessions: compatibility, cap, removal, TTL reaping (reaper and holder), orphans, the error ring
// and degradation (acceptance AC-092, AC-110, AC-111, AC-112, AC-113, AC-114, AC-115, AC-117).
import { readFileSync, utimesSync, writeFileSync, rmSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import { boxFixture, bwrapSkipReason, disposeFixture, pidGone, skipNotice, waitFor, type BoxFixture } from './helpers.js';
import { withReason } from '../../helpers/skip.js';

skipNotice('box session tests');
const fixtures: BoxFixture[] = [];
const fixture = (over: Record<string, unknown> = {}) => {
  const f = boxFixture(over);
  fixtures.push(f);
  return f;
};
afterEach(async () => {
  while (fixtures.length > 0) {
    const f = fixtures.pop();
    if (f) await disposeFixture(f);
  }
});

async function refusal(p: Promise<unknown>): Promise<LbotError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (err instanceof LbotError) return err;
  throw new Error(`expected an LbotError, got ${String(err)}`);
}

function record(f: BoxFixture, sid: string): { owner: unknown; backend_state: { ns: { pid: number }; holder: { pid: number }; dir: string } } {
  return JSON.parse(readFileSync(f.box.layout.recordFile(sid), 'utf8')) as {
    owner: unknown;
    backend_state: { ns: { pid: number }; holder: { pid: number }; dir: string };
  };
}

describe('degradation without a sandbox', () => {
  it('fails closed with box.unavailable when box is disabled, and reports it (AC-113)', async () => {
    const f = fixture({ enabled: false });
    const e = await refusal(f.box.exec({ cmd: 'true' }));
    expect(e.code).toBe('box.unavailable');
    expect(e.details.reason).toBe('disabled');
    expect(e.message).toContain('box.enabled');
    expect(await f.box.status()).toMatchObject({ available: false, enabled: false });
  });

  it('names the configured backend when it is missing (AC-114)', async () => {
    const f = fixture({ backend: 'podman' });
    const status = await f.box.status();
    expect(status.available).toBe(false);
    expect(status.connector_error).toContain('podman');
    const e = await refusal(f.box.exec({ cmd: 'true' }));
    expect(e.code).toBe('box.unavailable');
    expect(e.details.reason).toBe('backend_missing');
  });

  it('keeps the 50 most recent exec-path errors, oldest first (AC-117)', async () => {
    const f = fixture({ allowed_mount_roots: [] });
    for (let i = 0; i < 60; i++) await refusal(f.box.exec({ cmd: 'true', host_path: `/etc/x${i}` }));
    const errors = f.box.errors();
    expect(errors).toHaveLength(50);
    expect(errors[0]?.message).toContain('/etc/x10');
    expect(errors.at(-1)?.message).toContain('/etc/x59');
    for (const e of errors) expect(e).toMatchObject({ timestamp: expect.any(String), type: 'BoxValidationError', code: 'box.mount_denied' });
  });
});

describe.skipIf(bwrapSkipReason !== null)(withReason('box sessions', bwrapSkipReason), () => {
  it('refuses an incompatible spec and keeps the session usable (AC-092)', async () => {
    const f = fixture();
    await f.box.exec({ session_id: 's1', cmd: 'echo a > /tmp/a' });
    const e = await refusal(f.box.exec({ session_id: 's1', cmd: 'true', network: 'on' }));
    expect(e.code).toBe('box.session_conflict');
    expect(e.message).toContain('network');
    expect((await f.box.exec({ session_id: 's1', cmd: 'cat /tmp/a' })).result.stdout).toBe('a\n');
  });

  it('enforces the session cap and keeps existing sessions working (AC-111)', async () => {
    const f = fixture({ max_sessions: 3 });
    for (const s of ['m1', 'm2', 'm3']) await f.box.exec({ session_id: s, cmd: 'true' });
    const e = await refusal(f.box.exec({ session_id: 'm4', cmd: 'true' }));
    expect(e.code).toBe('box.session_limit');
    for (const s of ['m1', 'm2', 'm3']) expect((await f.box.exec({ session_id: s, cmd: 'true' })).result.ok).toBe(true);
  });

  it('removes a session with its sandbox; unknown ids are not found (AC-112)', async () => {
    const f = fixture();
    await f.box.exec({ session_id: 's1', cmd: 'true' });
    const { backend_state } = record(f, 's1');
    await f.box.removeSession('s1');
    expect(await f.box.sessions()).toEqual([]);
    expect(pidGone(backend_state.ns.pid)).toBe(true);
    expect((await refusal(f.box.removeSession('nope'))).code).toBe('box.session_not_found');
  });

  it('reaps idle sessions on its own schedule but not sessions with a running managed process (AC-110)', async () => {
    const f = fixture({ session_ttl_sec: 1, limits: { reaper_interval_sec: 1 } });
    await f.box.exec({ session_id: 'r1', cmd: 'true' });
    await f.box.startProcess('r2', { process_id: 'p', command: 'sleep', args: ['600'] });
    const pid = record(f, 'r1').backend_state.ns.pid;
    const reaper = f.box.startReaper();
    try {
      expect(await waitFor(async () => !(await f.box.sessions()).some((s) => s.session_id === 'r1'), 8000)).toBe(true);
    } finally {
      reaper.close();
    }
    expect(await waitFor(() => pidGone(pid), 3000)).toBe(true);
    expect((await f.box.sessions()).map((s) => s.session_id)).toEqual(['r2']);
    expect(f.box.processStatus('r2', 'p').status).toBe('running');
  });

  it('lets an idle holder end itself without any lbot process (box.md §5.1)', async () => {
    const f = fixture({ session_ttl_sec: 2 });
    await f.box.exec({ session_id: 'idle', cmd: 'true' });
    const pid = record(f, 'idle').backend_state.ns.pid;
    expect(await waitFor(() => pidGone(pid), 12_000)).toBe(true);
    expect(await f.box.reapExpired()).toEqual(['idle']);
  });

  it('removes sessions of a serve instance that is gone, and holders without a record (AC-115)', async () => {
    const f = fixture();
    await f.box.exec({ session_id: 'o1', cmd: 'true' });
    const file = f.box.layout.recordFile('o1');
    const rec = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown> & { backend_state: { ns: { pid: number } } };
    writeFileSync(file, JSON.stringify({ ...rec, owner: { kind: 'serve', pid: 999_999, start: '1', boot: 'gone' } }));
    expect(await f.box.reapExpired()).toEqual(['o1']);
    expect(await waitFor(() => pidGone(rec.backend_state.ns.pid), 3000)).toBe(true);

    await f.box.exec({ session_id: 'o2', cmd: 'true' });
    const o2 = record(f, 'o2').backend_state;
    rmSync(f.box.layout.sessionDir('o2'), { recursive: true, force: true });
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(o2.dir, old, old);
    await f.box.cleanupOrphans();
    expect(await waitFor(() => pidGone(o2.ns.pid), 3000)).toBe(true);
  });

  it('recreates a session whose extra mounts changed when no managed process runs', async () => {
    const f = fixture();
    const a = path.join(f.root, 'allowed');
    mkdirSync(path.join(a, 'one'), { recursive: true });
    const g = f.open({ allowed_mount_roots: [a] });
    await g.exec({ session_id: 'x', cmd: 'echo a > /tmp/mark' });
    const { result } = await g.exec({
      session_id: 'x',
      cmd: 'ls /mnt/one >/dev/null && echo mounted; cat /tmp/mark 2>&1; echo "cat-exit=$?"',
      extra_mounts: [{ host_path: path.join(a, 'one'), mount_path: '/mnt/one', mode: 'ro' }],
    });
    // The new mount is there and the old session's /tmp is gone: the session was recreated.
    expect(result.stdout).toContain('mounted\n');
    expect(result.stdout).toContain('No such file');
    expect(result.stdout).toContain('cat-exit=1');
  });

  it('drops a shutdown serve instance’s non-persistent sessions', async () => {
    const f = fixture();
    const serve = (await import('../../../src/runtime/box/service.js')).createBoxService({ dataDir: f.dataDir, config: f.config, owner: 'serve' });
    await serve.exec({ session_id: 'a', cmd: 'true' });
    await serve.exec({ session_id: 'b', cmd: 'true', persistent: true });
    await serve.shutdown();
    expect((await f.box.sessions()).map((s) => s.session_id)).toEqual(['b']);
  });
});
