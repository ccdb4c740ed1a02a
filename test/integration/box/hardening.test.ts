// The sandbox boundary against a hostile caller: the caller's env never reaches host helpers, seccomp
// refuses escape syscalls (nested user namespaces among them) for root and non-root hosts alike, root
// hosts run sandboxes as an unprivileged uid, and host mounts cannot be swapped after validation.
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BoxSpec } from '../../../src/core/box/model.js';
import { LbotError } from '../../../src/core/errors.js';
import { BwrapBackend } from '../../../src/runtime/box/bwrap.js';
import { SessionRecordSchema } from '../../../src/runtime/box/backend.js';
import { probeCommand } from '../../../src/runtime/box/host-tools.js';
import { boxFixture, bwrapSkipReason, disposeFixture, type BoxFixture } from './helpers.js';
import { withReason } from '../../helpers/skip.js';

const isRoot = process.getuid?.() === 0;
const NOT_ROOT = !isRoot && 'the tests do not run as root';
const fixtures: BoxFixture[] = [];
const temps: string[] = [];
const fixture = (over: Record<string, unknown> = {}) => {
  const f = boxFixture(over);
  fixtures.push(f);
  return f;
};
const temp = () => {
  const d = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'lbot-hard-')));
  temps.push(d);
  return d;
};
afterEach(async () => {
  while (fixtures.length > 0) {
    const f = fixtures.pop();
    if (f) await disposeFixture(f);
  }
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

function spec(over: Partial<BoxSpec> = {}): BoxSpec {
  return {
    session_id: 'hard',
    cmd: 'true',
    workdir: '/workspace',
    timeout_sec: 30,
    network: 'off',
    env: {},
    image: 'debian:bookworm-slim',
    host_path: null,
    host_path_mode: 'rw',
    mount_path: '/workspace',
    extra_mounts: [],
    persistent: false,
    cpus: 1,
    memory_mb: 512,
    pids_limit: 128,
    read_only_rootfs: true,
    workspace_quota_mb: 0,
    ...over,
  };
}

/** Runs syscalls by number from inside the sandbox (perl is part of every Debian base system). */
const SYSCALL_PROBE = `perl -e 'for my $n (@ARGV) { $! = 0; my $r = syscall($n, 0, 0, 0, 0, 0); print "$n $r ", $! + 0, "\\n" }'`;

describe.skipIf(bwrapSkipReason !== null)(withReason('bwrap hardening', bwrapSkipReason), () => {
  it('applies the caller env inside the sandbox: LD_DEBUG_OUTPUT writes nothing on the host', async () => {
    // Below the env policy on purpose: even a variable the policy would refuse has no effect on the host.
    const f = fixture();
    await f.box.exec({ session_id: 'envs', cmd: 'true' });
    const record = SessionRecordSchema.parse(JSON.parse(readFileSync(f.box.layout.recordFile('envs'), 'utf8')));
    const backend = new BwrapBackend({ bin: 'bwrap', baseDir: f.root, limits: 'auto', nodeBinary: null });
    const marker = path.join(temp(), 'ld');
    const out = await backend.exec(record, {
      cmd: 'echo "$LD_DEBUG"; echo "$MY_VAR"',
      workdir: '/workspace',
      env: { LD_DEBUG: 'libs', LD_DEBUG_OUTPUT: marker, MY_VAR: "it's set" },
      timeoutMs: 10_000,
      captureBytes: 65_536,
    });
    expect(out.stdout.rawText()).toBe("libs\nit's set\n");
    expect(readdirSync(path.dirname(marker))).toEqual([]);
  });

  it('refuses namespace creation, mounts, keyrings, bpf, ptrace, userfaultfd, perf and io_uring by seccomp', async () => {
    const f = fixture();
    const nested = await f.box.exec({ cmd: 'unshare -U -r true; echo "unshare=$?"; grep -E "^(Seccomp|NoNewPrivs|CapEff):" /proc/self/status' });
    expect(nested.result.stdout).toContain('unshare=1');
    expect(nested.result.stdout).toMatch(/Seccomp:\s+2/);
    expect(nested.result.stdout).toMatch(/NoNewPrivs:\s+1/);
    expect(nested.result.stdout).toMatch(/CapEff:\s+0+\n/);
    // unshare, setns, mount, keyctl, bpf, ptrace, userfaultfd, perf_event_open, io_uring_setup, init_module
    const denied = [272, 308, 165, 250, 321, 101, 323, 298, 425, 175];
    const { result } = await f.box.exec({ cmd: `${SYSCALL_PROBE} ${denied.join(' ')} 39` });
    const lines = result.stdout.trim().split('\n');
    for (const nr of denied) expect(lines).toContain(`${nr} -1 1`);
    // getpid still works: the filter allows what programs need.
    expect(lines.find((l) => l.startsWith('39 '))).toMatch(/^39 \d+ 0$/);
    // clone with CLONE_NEWUSER from inside is refused too; plain fork and threads keep working.
    const threads = await f.box.exec({ cmd: `${SYSCALL_PROBE.replace('syscall($n, 0', 'syscall($n, 0x10000000')} 56; sh -c 'echo child'` });
    expect(threads.result.stdout).toContain('56 -1 1');
    expect(threads.result.stdout).toContain('child');
  });

  it.skipIf(!isRoot)(withReason('as root, runs the sandbox as an unprivileged uid: root-owned files are not its own', NOT_ROOT), async () => {
    const ws = temp();
    chmodSync(ws, 0o755);
    writeFileSync(path.join(ws, 'secret'), 'root only\n', { mode: 0o600 });
    const f = fixture({ allowed_mount_roots: [ws] });
    const { result } = await f.box.exec({
      session_id: 'who',
      host_path: ws,
      host_path_mode: 'ro',
      cmd: "id -u; cat /workspace/secret 2>/tmp/err || { grep -q 'Permission denied' /tmp/err && echo denied; }; sleep 30 & echo $! > /tmp/pid; stat -c %u /workspace/secret",
    });
    const [uid, secret, owner] = result.stdout.trim().split('\n');
    expect(uid).not.toBe('0');
    expect(secret).toBe('denied');
    // Host root shows as the overflow uid inside: the sandbox user owns nothing of root's.
    expect(owner).not.toBe(uid);
    // Seen from the host, every process of the session runs as the sandbox uid.
    const record = SessionRecordSchema.parse(JSON.parse(readFileSync(f.box.layout.recordFile('who'), 'utf8')));
    const nsPid = (record.backend_state.ns as { pid: number }).pid;
    const hostUid = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    expect(hostUid(nsPid)).toBe(65532);
  });

  it.skipIf(!isRoot)(withReason('as root, refuses a writable host path the sandbox uid cannot write, naming the fix', NOT_ROOT), async () => {
    const ws = temp();
    chmodSync(ws, 0o755);
    const f = fixture({ allowed_mount_roots: [ws] });
    const err = await f.box.exec({ host_path: ws, cmd: 'touch /workspace/x' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LbotError);
    expect((err as LbotError).code).toBe('box.mount_denied');
    expect((err as LbotError).hint).toContain('chown');
    chownSync(ws, 65532, 65532);
    const ok = await f.box.exec({ host_path: ws, cmd: 'touch /workspace/x && echo ok' });
    expect(ok.result.stdout).toBe('ok\n');
    expect(statSync(path.join(ws, 'x')).uid).toBe(65532);
  });

  it('refuses a host path swapped for a symlink after validation, and never mounts its target', async () => {
    const root = temp();
    const ws = path.join(root, 'ws');
    mkdirSync(ws, { mode: 0o755 });
    if (isRoot) chownSync(ws, 65532, 65532);
    const backend = new BwrapBackend({ bin: 'bwrap', baseDir: path.join(root, 'base'), limits: 'auto', nodeBinary: null });
    const shared = path.join(root, 'shared');
    mkdirSync(shared, { mode: 0o755 });
    // Validation saw a directory; the attacker renames it away and plants a symlink to /etc.
    renameSync(ws, `${ws}.away`);
    symlinkSync('/etc', ws);
    const started = backend.startSession(spec({ host_path: ws }), { sharedDir: shared, ttlSec: 60, key: 'swap' });
    await expect(started).rejects.toMatchObject({ code: 'box.mount_denied' });
    // A parent swapped for a symlink is caught as well: the opened directory is not the validated one.
    rmSync(ws);
    renameSync(`${ws}.away`, ws);
    const parent = path.join(root, 'p');
    mkdirSync(path.join(parent, 'inner'), { recursive: true });
    const inner = path.join(parent, 'inner');
    renameSync(parent, `${parent}.away`);
    symlinkSync(`${parent}.away`, parent);
    await expect(backend.startSession(spec({ host_path: inner }), { sharedDir: shared, ttlSec: 60, key: 'swap2' })).rejects.toMatchObject({
      code: 'box.mount_denied',
    });
    expect(readdirSync(path.join(root, 'base')).filter((n) => !n.endsWith('.bpf'))).toEqual([]);
  });

  it('enters a network-on session (the host network namespace is not entered) with the filter still on', async () => {
    const f = fixture();
    const { result } = await f.box.exec({ network: 'on', cmd: 'grep ^Seccomp: /proc/self/status; id -u' });
    expect(result.exit_code).toBe(0);
    expect(result.stdout).toMatch(/Seccomp:\s+2/);
    if (isRoot) expect(result.stdout).toContain('65532');
  });

  it('refuses a host path with .. segments as box.mount_denied', async () => {
    const f = fixture();
    await expect(f.box.exec({ host_path: '/tmp/../etc', cmd: 'true' })).rejects.toMatchObject({ code: 'box.mount_denied' });
  });

  it.skipIf(!isRoot)(
    withReason(
      'runs hardened for a non-root lbot too: nested user namespaces refused (setpriv --reuid)',
      NOT_ROOT && 'the tests do not run as root, so they cannot switch lbot to another uid with setpriv',
    ),
    async () => {
      const home = temp();
      chmodSync(home, 0o777);
      const cli = path.resolve('bin/lbot.js');
      const r = await probeCommand(
        [
          'setpriv',
          '--reuid=65534',
          '--regid=65534',
          '--clear-groups',
          '--',
          process.execPath,
          cli,
          '--data-dir',
          path.join(home, 'data'),
          'box',
          'exec',
          '--',
          'sh',
          '-c',
          'id -u; unshare -U -r true 2>/dev/null; echo "unshare=$?"; grep ^Seccomp: /proc/self/status',
        ],
        60_000,
      );
      expect(r.output).toContain('65534');
      expect(r.output).toContain('unshare=1');
      expect(r.output).toMatch(/Seccomp:\s+2/);
    },
  );
});

describe.skipIf(bwrapSkipReason !== null)(`bwrap holders${bwrapSkipReason ? ` (skipped: ${bwrapSkipReason})` : ''}`, () => {
  it('ends a persistent session whose data dir was deleted, with every process in it', async () => {
    const f = boxFixture();
    await f.box.exec({ session_id: 'orphan', persistent: true, cmd: 'sleep 600 & true' });
    const record = SessionRecordSchema.parse(JSON.parse(readFileSync(f.box.layout.recordFile('orphan'), 'utf8')));
    const ns = record.backend_state.ns as { pid: number };
    const holder = record.backend_state.holder as { pid: number };
    rmSync(f.root, { recursive: true, force: true });
    const gone = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] === 'Z';
      } catch {
        return true;
      }
    };
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && !(gone(ns.pid) && gone(holder.pid))) await new Promise((r) => setTimeout(r, 200));
    expect(gone(ns.pid)).toBe(true);
    expect(gone(holder.pid)).toBe(true);
  });
});
