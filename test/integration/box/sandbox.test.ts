// Real bwrap sandboxes: isolation, hardening, persistence, timeouts and limits
// (acceptance AC-090, AC-091, AC-093, AC-096, AC-098, AC-099, AC-107, AC-216; box.md §14.7 item 66).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import { findExecutable } from '../../../src/runtime/box/host-tools.js';
import { boxFixture, bwrapSkipReason, disposeFixture, pidGone, skipNotice, waitFor, type BoxFixture } from './helpers.js';
import { CONNECT_REFUSED, connectCommand, hostTcpServer } from '../../helpers/net.js';
import { withReason } from '../../helpers/skip.js';

skipNotice('box sandbox tests');
const HAS_WGET = findExecutable('wget') !== null;
/** Counts `sleep 600` processes in the session without relying on procps being installed. */
const COUNT_SLEEPERS = "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done | grep -c '^sleep 600'";
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

function holderPid(f: BoxFixture, sid: string): number {
  const rec = JSON.parse(readFileSync(f.box.layout.recordFile(sid), 'utf8')) as { backend_state: { ns: { pid: number } } };
  return rec.backend_state.ns.pid;
}

describe.skipIf(bwrapSkipReason !== null)(withReason('bwrap sandbox', bwrapSkipReason), () => {
  it('runs a command and reports status, exit code and both streams (AC-090)', async () => {
    const f = fixture();
    const { result } = await f.box.exec({ cmd: "sh -c 'echo hi; echo err >&2; exit 3'" });
    expect(result).toMatchObject({ status: 'completed', ok: false, exit_code: 3, stdout: 'hi\n', stderr: 'err\n', backend: 'bwrap', stdout_truncated: false });
    expect(result.duration_ms).toBeGreaterThan(0);
    expect(await f.box.sessions()).toEqual([]);
  });

  it("has no network by default: only the loopback interface, and the host's 127.0.0.1 is out of reach (AC-096)", async () => {
    const f = fixture();
    const { result } = await f.box.exec({ cmd: "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '" });
    expect(result.stdout.trim()).toBe('lo');
    const server = await hostTcpServer();
    try {
      const probe = await f.box.exec({ cmd: connectCommand(server.port) });
      expect(probe.effective_spec.network).toBe('off');
      expect(probe.result.stdout).toMatch(CONNECT_REFUSED);
      expect(probe.result.exit_code).toBe(1);
      expect(server.connections()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it.skipIf(!HAS_WGET)(
    withReason(
      'wget fails with a network failure, not a missing tool (AC-096)',
      !HAS_WGET && 'wget is not installed on the host, so the sandbox (which binds the host /usr) has none',
    ),
    async () => {
      const f = fixture();
      const fetch = await f.box.exec({
        cmd: 'command -v wget >/dev/null || echo NO-WGET; wget -q -T 3 -O- http://example.com; rc=$?; echo "wget-exit=$rc"; [ "$rc" -eq 0 ] || echo BLOCKED',
      });
      expect(fetch.result.stdout).not.toContain('NO-WGET');
      // GNU wget exits 4 on a network failure (here: no name resolution without a network); 127 would be a missing tool.
      expect(fetch.result.stdout).toContain('wget-exit=4');
      expect(fetch.result.stdout).toContain('BLOCKED');
    },
  );

  it("with network on (spec or profile) a server on the host's 127.0.0.1 is reachable; with network off the same connect fails", async () => {
    const server = await hostTcpServer();
    try {
      const f = fixture();
      const on = await f.box.exec({ network: 'on', cmd: connectCommand(server.port) });
      expect(on.effective_spec.network).toBe('on');
      expect(on.result).toMatchObject({ exit_code: 0, stdout: `received ${server.token}\n` });
      expect(server.connections()).toBe(1);
      // The sandbox shares the host's network namespace: it sees the host's interfaces, not only lo.
      const ifaces = await f.box.exec({ network: 'on', cmd: "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '" });
      const hostIfaces = readFileSync('/proc/net/dev', 'utf8')
        .split('\n')
        .slice(2)
        .map((l) => l.split(':')[0]?.trim())
        .filter(Boolean);
      expect(ifaces.result.stdout.trim().split('\n').sort()).toEqual([...hostIfaces].sort());

      const profiled = fixture({ profile: 'network_basic' });
      const viaProfile = await profiled.box.exec({ cmd: connectCommand(server.port) });
      expect(viaProfile.effective_spec.network).toBe('on');
      expect(viaProfile.result).toMatchObject({ exit_code: 0, stdout: `received ${server.token}\n` });
      expect(server.connections()).toBe(2);

      const off = await f.box.exec({ network: 'off', cmd: connectCommand(server.port) });
      expect(off.effective_spec.network).toBe('off');
      expect(off.result.stdout).toMatch(CONNECT_REFUSED);
      expect(off.result.exit_code).toBe(1);
      expect(server.connections()).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('keeps the root read-only while /tmp, home and the workspace are writable (AC-098)', async () => {
    const f = fixture();
    const { result } = await f.box.exec({
      cmd: 'touch /usr/x 2>/dev/null || echo usr-ro; touch /x 2>/dev/null || echo root-ro; touch /tmp/x && touch /home/x && touch /workspace/x && echo rw-ok',
    });
    expect(result.stdout).toBe('usr-ro\nroot-ro\nrw-ok\n');
  });

  it('runs unprivileged: non-zero uid, no capabilities, no_new_privs, no engine socket, no host secrets (AC-216)', async () => {
    const f = fixture();
    const { result } = await f.box.exec({
      cmd: 'id -u; grep -E "CapEff|NoNewPrivs" /proc/self/status; ls /var/run/docker.sock /run/docker.sock 2>&1 | wc -l; ls /var /run /root 2>/dev/null | wc -l; hostname',
    });
    const [uid, capEff, nnp, sock, dirs, host] = result.stdout.trim().split('\n');
    expect(Number(uid)).toBeGreaterThan(0);
    expect(capEff).toMatch(/CapEff:\s+0000000000000000/);
    expect(nnp).toMatch(/NoNewPrivs:\s+1/);
    expect(sock).toBe('2');
    expect(dirs).toBe('0');
    expect(host).toBe('lbot-box');
  });

  it('passes only the requested environment (AC-107)', async () => {
    const f = fixture();
    process.env.LBOT_TEST_SECRET = 's3cr3t';
    try {
      const { result } = await f.box.exec({ cmd: 'echo $FOO; echo ${LBOT_TEST_SECRET:-unset}', env: { FOO: 'bar' } });
      expect(result.stdout).toBe('bar\nunset\n');
    } finally {
      delete process.env.LBOT_TEST_SECRET;
    }
  });

  it('keeps files and background processes across execs and across service instances (AC-091)', async () => {
    const f = fixture();
    await f.box.exec({ session_id: 's1', cmd: 'echo x > /tmp/f; echo y > /workspace/g; sleep 600 >/dev/null 2>&1 & echo started' });
    const again = f.open();
    const { result } = await again.exec({ session_id: 's1', cmd: `cat /tmp/f /workspace/g; ${COUNT_SLEEPERS}` });
    expect(result.stdout).toBe('x\ny\n1\n');
    const other = await again.exec({ session_id: 's2', cmd: 'cat /tmp/f' });
    expect(other.result.exit_code).not.toBe(0);
    const sessions = await again.sessions();
    expect(sessions.map((s) => s.session_id).sort()).toEqual(['s1', 's2']);
    for (const s of sessions) expect(s).toMatchObject({ backend: 'bwrap', alive: true, created_at: expect.any(String), last_used_at: expect.any(String) });
  });

  it('kills a timed-out command, destroys its session and leaves no process behind (AC-093)', async () => {
    const f = fixture();
    await f.box.exec({ session_id: 't1', cmd: 'true' });
    const pid = holderPid(f, 't1');
    const { result } = await f.box.exec({ session_id: 't1', cmd: 'sleep 30', timeout_sec: 2 });
    expect(result).toMatchObject({ status: 'timed_out', exit_code: null, ok: false });
    expect(result.stderr).toContain('timed out after 2 seconds');
    expect(await f.box.sessions()).toEqual([]);
    expect(await waitFor(() => pidGone(pid), 3000)).toBe(true);
  });

  it('contains a fork bomb: fork failures are reported and the machine stays responsive (AC-099)', async () => {
    const f = fixture();
    const { result } = await f.box.exec({
      session_id: 'fb',
      cmd: 'for i in $(seq 100); do sleep 5 & done 2>&1 | head -c 300; echo done',
      pids_limit: 32,
      timeout_sec: 20,
    });
    expect(result.status).toBe('completed');
    expect(result.stdout + result.stderr).toMatch(/fork|Resource temporarily unavailable|Cannot|retry/i);
    await f.box.removeSession('fb');
    const bomb = await f.box.exec({ session_id: 'fb2', cmd: 'b(){ b | b & }; b; sleep 2; echo survived', pids_limit: 64, timeout_sec: 5 });
    expect(['completed', 'timed_out']).toContain(bomb.result.status);
    const after = await f.box.exec({ cmd: 'echo responsive' });
    expect(after.result.stdout).toBe('responsive\n');
  });

  it('contains a memory hog (AC-099)', async () => {
    const f = fixture();
    const { result } = await f.box.exec({ cmd: 'x=$(head -c 300000000 /dev/zero | tr "\\0" a); echo ${#x}', memory_mb: 64, timeout_sec: 60 });
    expect(result.status).toBe('completed');
    expect(result.exit_code).not.toBe(0);
    expect(result.stdout).not.toContain('300000000');
  });

  it('contains a memory hog with rlimits too', async () => {
    const f = fixture({ bwrap: { limits: 'rlimit' } });
    const { result } = await f.box.exec({ cmd: 'x=$(head -c 300000000 /dev/zero | tr "\\0" a); echo ${#x}', memory_mb: 64, timeout_sec: 60 });
    expect(result.exit_code).not.toBe(0);
  });

  it('stops fallocate -l 3G near a 100 MB quota and removes the session afterwards', async () => {
    const f = fixture({ workspace_quota_mb: 100 });
    const err = await f.box
      .exec({
        session_id: 'q',
        cmd: 'fallocate -l 3G /workspace/big; for i in $(seq 30); do head -c 10000000 /dev/zero > /workspace/f$i || break; done; du -sk /workspace | cut -f1',
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LbotError);
    const e = err as LbotError;
    expect(e.code).toBe('box.quota_exceeded');
    expect(e.details.phase).toBe('after');
    expect(Number(e.details.used_bytes)).toBeLessThanOrEqual(100 * 1024 * 1024 + 8 * 1024 * 1024);
    expect(Number(e.details.used_bytes)).toBeGreaterThan(90 * 1024 * 1024);
    expect(await f.box.sessions()).toEqual([]);
  });
});
