// `lbot box …` end to end on the built binary with real bwrap sandboxes (acceptance §5: AC-090 … AC-117, AC-216).
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/core/config.js';
import { createBoxService } from '../../src/runtime/box/service.js';
import { findExecutable, probeCommand } from '../../src/runtime/box/host-tools.js';
import { bwrapSkipReason, pidGone } from '../integration/box/helpers.js';
import { CONNECT_REFUSED, connectArgv, hostTcpServer } from '../helpers/net.js';
import { withReason } from '../helpers/skip.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin', 'lbot.js');
if (!existsSync(path.join(REPO, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` before the e2e tests');
if (bwrapSkipReason) console.warn(`skipping sandbox e2e tests: ${bwrapSkipReason}`);
const HAS_WGET = findExecutable('wget') !== null;

type Cli = { exitCode: number; stdout: string; stderr: string };
const roots: string[] = [];
const dataDirs: string[] = [];

function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k] !== undefined) env[k] = process.env[k] ?? '';
  return { ...env, ...extra };
}

/** A fresh data dir (optionally with `box.*` config) and a CLI runner on it. */
function scenario(box: Record<string, unknown> = { workspace_quota_mb: 0 }) {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'lbot-box-e2e-')));
  roots.push(root);
  const dataDir = path.join(root, 'data');
  dataDirs.push(dataDir);
  mkdirSync(dataDir);
  writeFileSync(path.join(dataDir, 'lbot.config.json'), JSON.stringify({ box }));
  const lbot = async (args: string[], opts: { env?: Record<string, string>; input?: string } = {}): Promise<Cli> => {
    const r = await execa(process.execPath, [BIN, '--data-dir', dataDir, ...args], {
      reject: false,
      env: baseEnv(opts.env),
      extendEnv: false,
      cwd: root,
      timeout: 120_000,
      ...(opts.input !== undefined ? { input: opts.input } : {}),
    });
    return { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  const json = async <T = Record<string, unknown>>(args: string[], opts: { env?: Record<string, string> } = {}): Promise<{ r: Cli; v: T }> => {
    const r = await lbot(['--json', ...args], opts);
    let v: T;
    try {
      v = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? 'null') as T;
    } catch {
      throw new Error(`not JSON (exit ${r.exitCode}): ${r.stdout}\n${r.stderr}`);
    }
    return { r, v };
  };
  return { root, dataDir, lbot, json };
}

type ExecJson = {
  status: string;
  ok: boolean;
  exit_code: number | null;
  stdout: string;
  stderr: string;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  backend: string;
  duration_ms: number;
  session_id: string;
  effective_spec: Record<string, unknown>;
};
type ErrorJson = { ok: false; error: { code: string; message: string; details: Record<string, unknown> } };

afterAll(async () => {
  for (const d of dataDirs) {
    const config = ConfigSchema.parse({}).box;
    const box = createBoxService({ dataDir: d, config });
    for (const s of await box.sessions()) await box.removeSession(s.session_id).catch(() => undefined);
  }
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

describe('lbot box without a sandbox', () => {
  it('fails closed when box is disabled; status says so (AC-113)', async () => {
    const s = scenario();
    const env = { LBOT__BOX__ENABLED: 'false' };
    const { r, v } = await s.json<ErrorJson>(['box', 'exec', '--', 'true'], { env });
    expect(r.exitCode).toBe(125);
    expect(v.error).toMatchObject({ code: 'box.unavailable', details: { reason: 'disabled' } });
    expect(r.stderr).toContain('box.enabled');
    const status = await s.json(['box', 'status'], { env });
    expect(status.v).toMatchObject({ available: false, enabled: false });
    expect(existsSync(path.join(s.dataDir, 'box', 'bwrap'))).toBe(false);
  });

  it('names a configured backend that is missing (AC-114)', async (ctx) => {
    const missing = (
      await Promise.all((['podman', 'docker'] as const).map(async (n) => ({ n, ok: findExecutable(n) !== null && (await probeCommand([n, 'info'], 5000)).ok })))
    ).find((b) => !b.ok);
    if (!missing) ctx.skip('both docker and podman engines answer here, so no configured backend is missing');
    const s = scenario({ backend: missing.n });
    const status = await s.json<{ available: boolean; connector_error: string }>(['box', 'status']);
    expect(status.v.available).toBe(false);
    expect(status.v.connector_error).toContain(missing.n);
    const { r, v } = await s.json<ErrorJson>(['box', 'exec', '--', 'true']);
    expect(r.exitCode).toBe(125);
    expect(v.error).toMatchObject({ code: 'box.unavailable', details: { reason: 'backend_missing' } });
  });

  it('lists the 50 most recent errors, newest last (AC-117)', async () => {
    const s = scenario({ allowed_mount_roots: [] });
    const box = createBoxService({ dataDir: s.dataDir, config: ConfigSchema.parse({ box: { allowed_mount_roots: [] } }).box });
    for (let i = 0; i < 59; i++) await box.exec({ cmd: 'true', host_path: `/etc/e${i}` }).catch(() => undefined);
    const last = await s.lbot(['box', 'exec', '--host-path', '/etc/e59', '--', 'true']);
    expect(last.exitCode).toBe(125);
    const { v } = await s.json<Array<{ timestamp: string; type: string; message: string }>>(['box', 'errors']);
    expect(v).toHaveLength(50);
    expect(v[0]?.message).toContain('/etc/e10');
    expect(v.at(-1)?.message).toContain('/etc/e59');
    for (const e of v) expect(e).toMatchObject({ timestamp: expect.any(String), type: expect.any(String), message: expect.any(String) });
  });

  it('prints the built-in profiles', async () => {
    const { v } = await scenario().json<Array<{ name: string; locked: string[] }>>(['box', 'profiles']);
    expect(v.map((p) => p.name)).toEqual(['default', 'offline_readonly', 'network_basic', 'network_extended']);
    expect(v[1]?.locked).toEqual(['network', 'host_path_mode', 'read_only_rootfs']);
  });
});

describe.skipIf(bwrapSkipReason !== null)(withReason('lbot box with bwrap', bwrapSkipReason), () => {
  it('runs a command and exits with its status (AC-090)', async () => {
    const { r, v } = await scenario().json<ExecJson>(['box', 'exec', '--', 'sh', '-c', 'echo hi; echo err >&2; exit 3']);
    expect(r.exitCode).toBe(3);
    expect(v).toMatchObject({
      status: 'completed',
      ok: false,
      exit_code: 3,
      stdout: 'hi\n',
      stderr: 'err\n',
      stdout_truncated: false,
      stderr_truncated: false,
      backend: 'bwrap',
    });
    expect(v.duration_ms).toBeGreaterThan(0);
    expect(v.session_id).toEqual(expect.any(String));
  });

  it('reuses a session across invocations and keeps others apart (AC-091)', async () => {
    const s = scenario();
    expect((await s.lbot(['box', 'exec', '--session', 's1', '--', 'sh', '-c', 'echo x > /tmp/f'])).exitCode).toBe(0);
    const second = await s.lbot(['box', 'exec', '--session', 's1', '--', 'cat', '/tmp/f']);
    expect(second).toMatchObject({ exitCode: 0, stdout: 'x' });
    expect((await s.lbot(['box', 'exec', '--session', 's2', '--', 'cat', '/tmp/f'])).exitCode).not.toBe(0);
    const { v } = await s.json<Array<Record<string, unknown>>>(['box', 'sessions']);
    expect(v.map((x) => x.session_id).sort()).toEqual(['s1', 's2']);
    for (const x of v) expect(x).toMatchObject({ backend: 'bwrap', created_at: expect.any(String), last_used_at: expect.any(String) });
  });

  it('keeps a background process running between invocations', async () => {
    const s = scenario();
    expect((await s.lbot(['box', 'exec', '--session', 'bg', '--', 'sh', '-c', 'sleep 600 >/dev/null 2>&1 &'])).exitCode).toBe(0);
    const check = await s.lbot([
      'box',
      'exec',
      '--session',
      'bg',
      '--',
      'sh',
      '-c',
      "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done | grep -c '^sleep 600'",
    ]);
    expect(check.stdout).toBe('1');
  });

  it('refuses an incompatible spec with exit 125 and keeps the session (AC-092)', async () => {
    const s = scenario();
    await s.lbot(['box', 'exec', '--session', 's1', '--', 'true']);
    const { r, v } = await s.json<ErrorJson>(['box', 'exec', '--session', 's1', '--network', 'on', '--', 'true']);
    expect(r.exitCode).toBe(125);
    expect(v.error.code).toBe('box.session_conflict');
    expect((await s.json<ExecJson>(['box', 'exec', '--session', 's1', '--', 'true'])).v.effective_spec.network).toBe('off');
  });

  it('times out with 124 and removes the session; clamps the timeout to the profile (AC-093)', async () => {
    const s = scenario();
    const { r, v } = await s.json<ExecJson>(['box', 'exec', '--session', 't1', '--timeout', '2', '--', 'sleep', '30']);
    expect(r.exitCode).toBe(124);
    expect(v.status).toBe('timed_out');
    expect((await s.json<unknown[]>(['box', 'sessions'])).v).toEqual([]);
    const clamp = await s.json<ExecJson>(['box', 'exec', '--timeout', '1120', '--', 'true']);
    expect(clamp.v.effective_spec.timeout_sec).toBe(120);
  });

  it('truncates long output to output_limit_chars, keeping head and tail (AC-095)', async () => {
    const s = scenario({ workspace_quota_mb: 0, output_limit_chars: 4000 });
    const gen = "head -c 10000 /dev/zero | tr '\\0' a; printf b; head -c 10000 /dev/zero | tr '\\0' c; echo short >&2";
    const { v } = await s.json<ExecJson>(['box', 'exec', '--', 'sh', '-c', gen]);
    expect(Array.from(v.stdout).length).toBeLessThanOrEqual(4000);
    expect(v.stdout).toMatch(/^a+\n\n\.\.\. \[\d+ characters truncated\] \.\.\.\n\nc+$/);
    expect(v).toMatchObject({ stdout_truncated: true, stderr: 'short\n', stderr_truncated: false });
    const exact = await s.json<ExecJson>(['box', 'exec', '--', 'sh', '-c', "head -c 4000 /dev/zero | tr '\\0' a"]);
    expect(exact.v).toMatchObject({ stdout_truncated: false });
    expect(exact.v.stdout).toHaveLength(4000);
  });

  it('truncates --json output to 4000 characters by default (head 60 % / tail 40 %); text mode is untruncated', async () => {
    const s = scenario();
    const gen = "head -c 10000 /dev/zero | tr '\\0' a; printf b; head -c 10000 /dev/zero | tr '\\0' c";
    const { v } = await s.json<ExecJson>(['box', 'exec', '--', 'sh', '-c', gen]);
    expect(v.stdout_truncated).toBe(true);
    expect(Array.from(v.stdout)).toHaveLength(4000);
    const m = /^(a+)\n\n\.\.\. \[\d+ characters truncated\] \.\.\.\n\n(c+)$/.exec(v.stdout);
    expect(m).not.toBeNull();
    const head = m?.[1]?.length ?? 0;
    const tail = m?.[2]?.length ?? 0;
    expect(head).toBe(Math.floor((head + tail) * 0.6));
    const plain = await s.lbot(['box', 'exec', '--', 'sh', '-c', gen]);
    expect(plain.exitCode).toBe(0);
    expect(plain.stdout).toBe(`${'a'.repeat(10000)}b${'c'.repeat(10000)}`);
  });

  it('has no network by default and forces locked profile fields (AC-096, AC-097)', async () => {
    const s = scenario({ workspace_quota_mb: 0, profile: 'offline_readonly' });
    const ifaces = await s.lbot(['box', 'exec', '--', 'sh', '-c', "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"]);
    expect(ifaces.stdout).toBe('lo');
    const server = await hostTcpServer();
    try {
      // Even asked for network on, the locked profile keeps it off: the host's 127.0.0.1 is out of reach.
      const probe = await s.json<ExecJson>(['box', 'exec', '--network', 'on', '--', ...connectArgv(server.port)]);
      expect(probe.v.effective_spec.network).toBe('off');
      expect(probe.v.stdout).toMatch(CONNECT_REFUSED);
      expect(probe.r.exitCode).toBe(1);
      expect(server.connections()).toBe(0);
    } finally {
      await server.close();
    }
    const { v } = await s.json<ExecJson>(['box', 'exec', '--network', 'on', '--', 'true']);
    expect(v.effective_spec.network).toBe('off');
  });

  it.skipIf(!HAS_WGET)(
    withReason(
      'wget in the offline box fails with a network failure, not a missing tool (AC-096)',
      !HAS_WGET && 'wget is not installed on the host, so the sandbox (which binds the host /usr) has none',
    ),
    async () => {
      const s = scenario({ workspace_quota_mb: 0, profile: 'offline_readonly' });
      const net = await s.lbot([
        'box',
        'exec',
        '--',
        'sh',
        '-c',
        'command -v wget >/dev/null || echo NO-WGET; wget -q -T 3 -O- http://example.com 2>/dev/null; rc=$?; echo "wget-exit=$rc"; [ "$rc" -eq 0 ] || echo BLOCKED',
      ]);
      expect(net.stdout).not.toContain('NO-WGET');
      // GNU wget exits 4 on a network failure (no name resolution without a network); 127 would be a missing tool.
      expect(net.stdout).toContain('wget-exit=4');
      expect(net.stdout).toContain('BLOCKED');
    },
  );

  it("with network on (flag or network_basic profile) reaches a TCP server on the host's 127.0.0.1; with network off it does not", async () => {
    const s = scenario();
    const server = await hostTcpServer();
    try {
      const on = await s.json<ExecJson>(['box', 'exec', '--network', 'on', '--', ...connectArgv(server.port)]);
      expect(on.r.exitCode, on.r.stderr).toBe(0);
      expect(on.v).toMatchObject({ status: 'completed', stdout: `received ${server.token}\n` });
      expect(on.v.effective_spec.network).toBe('on');
      expect(server.connections()).toBe(1);
      const profiled = await s.json<ExecJson>(['box', 'exec', '--profile', 'network_basic', '--', ...connectArgv(server.port)]);
      expect(profiled.r.exitCode, profiled.r.stderr).toBe(0);
      expect(profiled.v.stdout).toBe(`received ${server.token}\n`);
      expect(profiled.v.effective_spec.network).toBe('on');
      expect(server.connections()).toBe(2);
      const off = await s.json<ExecJson>(['box', 'exec', '--network', 'off', '--', ...connectArgv(server.port)]);
      expect(off.v.effective_spec.network).toBe('off');
      expect(off.v.stdout).toMatch(CONNECT_REFUSED);
      expect(off.r.exitCode).toBe(1);
      expect(server.connections()).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('keeps the root read-only and drops privileges (AC-098, AC-216)', async () => {
    const s = scenario();
    expect((await s.lbot(['box', 'exec', '--', 'touch', '/usr/x'])).exitCode).not.toBe(0);
    expect((await s.lbot(['box', 'exec', '--', 'touch', '/tmp/x'])).exitCode).toBe(0);
    const h = await s.lbot(['box', 'exec', '--', 'sh', '-c', 'id -u; grep -E "CapEff|NoNewPrivs" /proc/self/status; ls /var/run/docker.sock 2>&1']);
    const lines = h.stdout.split('\n');
    expect(Number(lines[0])).toBeGreaterThan(0);
    expect(lines[1]).toMatch(/CapEff:\s+0{16}/);
    expect(lines[2]).toMatch(/NoNewPrivs:\s+1/);
    expect(lines[3]).toMatch(/No such file/);
  });

  it('enforces memory and pid limits and returns before the timeout (AC-099)', async () => {
    const s = scenario();
    const mem = await s.json<ExecJson>(['box', 'exec', '--memory', '64', '--', 'sh', '-c', 'x=$(head -c 300000000 /dev/zero | tr "\\0" a); echo ${#x}']);
    expect(mem.v.status).toBe('completed');
    expect(mem.r.exitCode).not.toBe(0);
    const pids = await s.json<ExecJson>(['box', 'exec', '--pids', '32', '--', 'sh', '-c', 'for i in $(seq 100); do sleep 5 & done; wait']);
    expect(pids.v.status).toBe('completed');
    expect(pids.v.stderr).toMatch(/fork|Resource temporarily unavailable|Cannot/i);
  });

  it('checks host mounts, extra mounts and the workdir against the allowlist (AC-100)', async () => {
    const s = scenario();
    const allowed = path.join(s.root, 'allowed');
    mkdirSync(path.join(allowed, 'proj'), { recursive: true });
    writeFileSync(path.join(allowed, 'proj', 'hello.txt'), 'hi');
    // As root the sandbox runs as the unprivileged sandbox uid: the operator grants it the workspace.
    if (process.getuid?.() === 0) chownSync(path.join(allowed, 'proj'), 65532, 65532);
    writeFileSync(path.join(s.dataDir, 'lbot.config.json'), JSON.stringify({ box: { workspace_quota_mb: 0, allowed_mount_roots: [allowed] } }));
    const ok = await s.lbot(['box', 'exec', '--host-path', path.join(allowed, 'proj'), '--', 'ls', '/workspace']);
    expect(ok).toMatchObject({ exitCode: 0, stdout: 'hello.txt' });
    const etc = await s.json<ErrorJson>(['box', 'exec', '--host-path', '/etc', '--', 'true']);
    expect(etc.r.exitCode).toBe(125);
    expect(etc.v.error.code).toBe('box.mount_denied');
    expect(etc.v.error.message).toContain(allowed);
    const missing = await s.json<ErrorJson>(['box', 'exec', '--host-path', path.join(allowed, 'missing'), '--', 'true']);
    expect(missing.v.error.code).toBe('box.validation');
    expect(missing.v.error.message).toContain('existing directory');
    expect((await s.json<ErrorJson>(['box', 'exec', '--mount', '/etc:/mnt/etc:ro', '--', 'true'])).v.error.code).toBe('box.mount_denied');
    expect((await s.lbot(['box', 'exec', '--mount', `${path.join(allowed, 'proj')}:/mnt/p:ro`, '--', 'cat', '/mnt/p/hello.txt'])).stdout).toBe('hi');
    const wd = await s.json<ErrorJson>(['box', 'exec', '--host-path', path.join(allowed, 'proj'), '--workdir', '/opt', '--', 'pwd']);
    expect(wd.r.exitCode).toBe(125);
    expect(wd.v.error.code).toBe('box.validation');
  });

  it('never mounts / or blocked paths; an empty allowlist switches host mounts off (AC-101)', async () => {
    const s = scenario({ workspace_quota_mb: 0, allowed_mount_roots: ['/'] });
    for (const p of ['/', '/etc', '/proc', '/sys', '/dev', '/root', '/boot', '/var/run/docker.sock']) {
      const { r, v } = await s.json<ErrorJson>(['box', 'exec', '--host-path', p, '--', 'true']);
      expect(r.exitCode, p).toBe(125);
      expect(v.error.code, p).toBe('box.mount_denied');
    }
    const empty = scenario({ workspace_quota_mb: 0, allowed_mount_roots: [] });
    const { v } = await empty.json<ErrorJson>(['box', 'exec', '--host-path', empty.root, '--', 'true']);
    expect(v.error.code).toBe('box.mount_denied');
    expect(v.error.message).toContain('switched off');
    expect((await empty.lbot(['box', 'exec', '--', 'true'])).exitCode).toBe(0);
  });

  it('checks the workspace quota before and after the command (AC-105, AC-106)', async () => {
    const s = scenario();
    const ws = path.join(s.root, 'ws');
    mkdirSync(ws);
    writeFileSync(path.join(ws, 'two-mb'), Buffer.alloc(2 * 1024 * 1024));
    writeFileSync(path.join(s.dataDir, 'lbot.config.json'), JSON.stringify({ box: { workspace_quota_mb: 1, allowed_mount_roots: [s.root] } }));
    const before = await s.json<ErrorJson>(['box', 'exec', '--host-path', ws, '--', 'touch', '/workspace/marker']);
    expect(before.r.exitCode).toBe(125);
    expect(before.v.error).toMatchObject({ code: 'box.quota_exceeded', details: { phase: 'before' } });
    expect(existsSync(path.join(ws, 'marker'))).toBe(false);
    const empty = path.join(s.root, 'empty');
    mkdirSync(empty);
    // As root the sandbox runs as the unprivileged sandbox uid: the operator grants it the workspace.
    if (process.getuid?.() === 0) chownSync(empty, 65532, 65532);
    const after = await s.json<ErrorJson>([
      'box',
      'exec',
      '--session',
      'qa',
      '--host-path',
      empty,
      '--',
      'sh',
      '-c',
      'head -c 3000000 /dev/zero > /workspace/three-mb',
    ]);
    expect(after.r.exitCode).toBe(125);
    expect(after.v.error).toMatchObject({ code: 'box.quota_exceeded', details: { phase: 'after', limit_bytes: 1024 * 1024 } });
    expect(Number(after.v.error.details.used_bytes)).toBeGreaterThan(1024 * 1024);
    expect((await s.json<unknown[]>(['box', 'sessions'])).v).toEqual([]);
  });

  it('passes --env and nothing from the host environment (AC-107)', async () => {
    const s = scenario();
    const r = await s.lbot(['box', 'exec', '--env', 'FOO=bar', '--', 'sh', '-c', 'echo $FOO; echo ${LBOT_TEST_SECRET:-unset}'], {
      env: { LBOT_TEST_SECRET: 's3cr3t' },
    });
    expect(r.stdout).toBe('bar\nunset');
  });

  it('manages processes across invocations and attaches from a pipe (AC-108, AC-109)', async () => {
    const s = scenario();
    expect((await s.lbot(['box', 'process', 'start', '--session', 'p1', '--id', 'a', '--', 'sleep', '600'])).exitCode).toBe(0);
    expect((await s.lbot(['box', 'process', 'start', '--session', 'p1', '--id', 'b', '--', 'sleep', '600'])).exitCode).toBe(0);
    expect((await s.lbot(['box', 'process', 'stop', '--session', 'p1', '--id', 'a'])).exitCode).toBe(0);
    expect((await s.json(['box', 'process', 'status', '--session', 'p1', '--id', 'b'])).v).toMatchObject({ status: 'running' });
    const a = await s.json<ErrorJson>(['box', 'process', 'status', '--session', 'p1', '--id', 'a']);
    expect(a.r.exitCode).toBe(3);
    expect(a.v.error.code).toBe('box.process_not_found');
    expect((await s.lbot(['box', 'process', 'start', '--session', 'p1', '--id', 'b', '--', 'sleep', '1'])).exitCode).toBe(8);
    expect((await s.lbot(['box', 'process', 'status', '--session', 'p1', '--id', 'zzz'])).exitCode).toBe(3);
    await s.lbot(['box', 'process', 'start', '--session', 'p1', '--id', 'c', '--', 'sh', '-c', 'echo broken >&2; exit 5']);
    await new Promise((r) => setTimeout(r, 500));
    expect((await s.json(['box', 'process', 'status', '--session', 'p1', '--id', 'c'])).v).toMatchObject({
      status: 'exited',
      exit_code: 5,
      stderr_preview: 'broken',
    });

    await s.lbot(['box', 'process', 'start', '--session', 'p2', '--id', 'cat', '--', 'cat']);
    const attach = await s.lbot(['box', 'attach', '--session', 'p2', '--id', 'cat'], { input: 'hello\n' });
    expect(attach.stdout).toBe('hello');
  });

  it('enforces the session cap and removes sessions (AC-111, AC-112)', async () => {
    const s = scenario({ workspace_quota_mb: 0, max_sessions: 3 });
    for (const id of ['m1', 'm2', 'm3']) expect((await s.lbot(['box', 'exec', '--session', id, '--', 'true'])).exitCode).toBe(0);
    const { r, v } = await s.json<ErrorJson>(['box', 'exec', '--session', 'm4', '--', 'true']);
    expect(r.exitCode).toBe(125);
    expect(v.error.code).toBe('box.session_limit');
    expect((await s.lbot(['box', 'exec', '--session', 'm1', '--', 'true'])).exitCode).toBe(0);
    const record = JSON.parse(readFileSync(path.join(s.dataDir, 'box', 'sessions', 'm1', 'record.json'), 'utf8')) as { backend_state: { ns: { pid: number } } };
    expect((await s.lbot(['box', 'rm', 'm1'])).exitCode).toBe(0);
    expect(pidGone(record.backend_state.ns.pid)).toBe(true);
    const nope = await s.json<ErrorJson>(['box', 'rm', 'nope']);
    expect(nope.r.exitCode).toBe(3);
    expect(nope.v.error.code).toBe('box.session_not_found');
  });

  it('reaps an idle session without any lbot call: its sandbox ends itself (AC-110)', async () => {
    const s = scenario({ workspace_quota_mb: 0, session_ttl_sec: 2 });
    expect((await s.lbot(['box', 'exec', '--session', 'r1', '--', 'true'])).exitCode).toBe(0);
    const record = JSON.parse(readFileSync(path.join(s.dataDir, 'box', 'sessions', 'r1', 'record.json'), 'utf8')) as { backend_state: { ns: { pid: number } } };
    const deadline = Date.now() + 15_000;
    while (!pidGone(record.backend_state.ns.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(pidGone(record.backend_state.ns.pid)).toBe(true);
    expect((await s.json<unknown[]>(['box', 'sessions'])).v).toEqual([]);
  });

  it('streams 2 GB of stdout and stderr without deadlock and keeps lbot under 256 MB', async () => {
    const s = scenario();
    const child = execa(
      process.execPath,
      [
        BIN,
        '--data-dir',
        s.dataDir,
        'box',
        'exec',
        '--json',
        '--timeout',
        '120',
        '--',
        'sh',
        '-c',
        '(head -c 1073741824 /dev/zero >&2 &); head -c 1073741824 /dev/zero; wait',
      ],
      {
        reject: false,
        env: baseEnv(),
        extendEnv: false,
        timeout: 180_000,
      },
    );
    let peakKb = 0;
    const timer = setInterval(() => {
      try {
        const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        peakKb = Math.max(peakKb, Number(m?.[1] ?? 0));
      } catch {
        // exited
      }
    }, 50);
    const r = await child;
    clearInterval(timer);
    expect(r.exitCode, r.stderr).toBe(0);
    const v = JSON.parse(r.stdout) as ExecJson;
    expect(v).toMatchObject({ status: 'completed', stdout_truncated: true, stderr_truncated: true });
    expect(v.stdout).toMatch(/characters truncated/);
    expect(peakKb).toBeGreaterThan(0);
    expect(peakKb).toBeLessThan(256 * 1024);
  }, 200_000);

  it('reports working backends in lbot doctor', async () => {
    const { v } = await scenario().json<{ box: { selected_backend: string; backends: Array<{ name: string; available: boolean }> } }>(['doctor']);
    expect(v.box.selected_backend).toBe('bwrap');
    expect(v.box.backends.find((b) => b.name === 'bwrap')?.available).toBe(true);
  });
});
