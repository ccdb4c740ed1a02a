// The in-session exec agent against a hostile command: it cannot reach the agent's socket, inherit its
// fds, signal it or run anything through it; the fallback (execs entering with nsenter) keeps working.
import { readFileSync, statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionRecordSchema } from '../../../src/runtime/box/backend.js';
import { boxFixture, bwrapSkipReason, disposeFixture, type BoxFixture } from './helpers.js';
import { withReason } from '../../helpers/skip.js';

const fixtures: BoxFixture[] = [];
const fixture = (over: Record<string, unknown> = {}) => {
  const f = boxFixture(over);
  fixtures.push(f);
  return f;
};

afterEach(async () => {
  for (const f of fixtures.splice(0)) await disposeFixture(f);
});

function agentSocket(f: BoxFixture, sid: string): string | null {
  const record = SessionRecordSchema.parse(JSON.parse(readFileSync(f.box.layout.recordFile(sid), 'utf8')));
  const socket = record.backend_state.agent_socket;
  return typeof socket === 'string' ? socket : null;
}

describe.skipIf(bwrapSkipReason !== null)(withReason('bwrap exec agent', bwrapSkipReason), () => {
  it('runs execs through the agent (PID 1 of the session) with no-new-privs, seccomp and the session cgroup', async () => {
    const f = fixture();
    const { result } = await f.box.exec({
      session_id: 'a',
      cmd: 'cat /proc/1/comm; grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status; cat /proc/self/cgroup',
    });
    expect(result.exit_code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('exec-agent');
    expect(lines).toContain('NoNewPrivs:\t1');
    expect(lines).toContain('Seccomp:\t2');
    const socket = agentSocket(f, 'a');
    expect(socket).not.toBeNull();
    // Only the host user may connect: no group or other bits on the socket in the session's private dir.
    expect(statSync(socket ?? '').mode & 0o077).toBe(0);
    expect(statSync(socket ?? '').uid).toBe(process.getuid?.());
  });

  it('a command cannot find or connect to the agent socket by its host path', async () => {
    const f = fixture();
    await f.box.exec({ session_id: 'c', cmd: 'true' });
    const socket = agentSocket(f, 'c') ?? '';
    const { result } = await f.box.exec({
      session_id: 'c',
      env: { S: socket },
      cmd: 'test -e "$S" && echo visible; python3 -c "import socket,os,sys; s=socket.socket(socket.AF_UNIX); s.connect(os.environ[\'S\'])" 2>/dev/null && echo connected; echo done',
    });
    expect(result.stdout.trim()).toBe('done');
  });

  it('a command inherits no agent fd and cannot open the fds of the agent or its handler', async () => {
    const f = fixture();
    const { result } = await f.box.exec({
      session_id: 'f',
      cmd: 'for fd in /proc/$$/fd/*; do readlink "$fd"; done; ls /proc/1/fd >/dev/null 2>&1 && echo agent-open; ls /proc/$PPID/fd >/dev/null 2>&1 && echo handler-open; echo done',
    });
    expect(result.exit_code).toBe(0);
    expect(result.stdout).not.toMatch(/socket:/);
    expect(result.stdout).not.toMatch(/agent-open|handler-open/);
    expect(result.stdout.trim().endsWith('done')).toBe(true);
  });

  it('a command cannot kill or stop the agent: the next exec still goes through it', async () => {
    const f = fixture();
    const first = await f.box.exec({ session_id: 'k', cmd: 'kill -KILL 1; kill -TERM 1; kill -STOP 1; kill -INT 1; sleep 0.2; grep ^State /proc/1/status' });
    expect(first.result.stdout).toMatch(/State:\s+S/);
    const next = await f.box.exec({ session_id: 'k', cmd: 'cat /proc/1/comm' });
    expect(next.result.stdout.trim()).toBe('exec-agent');
  });

  it('host policy still decides the env: a denied variable is refused before anything reaches the agent', async () => {
    const f = fixture();
    await expect(f.box.exec({ session_id: 'p', cmd: 'true', env: { LD_PRELOAD: '/tmp/x.so' } })).rejects.toMatchObject({ code: 'env.denied' });
  });

  it('a timeout kills the whole process group of an agent exec', async () => {
    const f = fixture();
    await f.box.exec({ session_id: 't', cmd: 'true' });
    const { result } = await f.box.exec({ session_id: 't', cmd: 'sleep 30 & echo $! > /workspace/bg; sleep 30', timeout_sec: 1 });
    expect(result.status).toBe('timed_out');
  });

  it('with box.bwrap.exec_agent false, execs enter with nsenter and keep every guarantee', async () => {
    const f = fixture({ bwrap: { exec_agent: false } });
    const { result } = await f.box.exec({ session_id: 'n', cmd: 'cat /proc/1/comm; grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status' });
    expect(result.exit_code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).not.toBe('exec-agent');
    expect(lines).toContain('NoNewPrivs:\t1');
    expect(lines).toContain('Seccomp:\t2');
    expect(agentSocket(f, 'n')).toBeNull();
  });
});
