// The workspace quota holds on host-path workspaces after `lbot box exec` returns: the session's quota
// watcher outlives the CLI, stops processes left running in the session (background writers, managed
// processes) once they pass the quota, and counts directories the sandbox made unreadable. Real bwrap
// sandboxes, the built CLI.
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { findExecutable } from '../../src/runtime/box/host-tools.js';
import { bwrapSkipReason, waitFor } from '../integration/box/helpers.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin', 'lbot.js');
if (!existsSync(path.join(REPO, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` before the e2e tests');

const MiB = 1024 * 1024;
const LIMIT = 1 * MiB;
const MARGIN = 4 * MiB;
/** The uid the non-root scenarios run lbot as, when these tests run as root. */
const PLAIN_UID = 65532;
const isRoot = process.getuid?.() === 0;

type Cli = { exitCode: number; stdout: string; stderr: string };
type ErrorJson = { ok: false; error: { code: string; message: string; details: Record<string, unknown> } };
const roots: string[] = [];
const cleanups: Array<() => Promise<unknown>> = [];

afterAll(async () => {
  for (const c of cleanups) await c().catch(() => undefined);
  for (const r of roots) {
    // Undo what the sandbox did to its workspace, so the tree can be removed.
    await execa('chmod', ['-R', 'u+rwX', r], { reject: false });
    rmSync(r, { recursive: true, force: true });
  }
});

/** Apparent size of everything under `dir`, read as the test (root reads through chmod 000). */
function du(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    total += st.size;
    if (st.isDirectory()) total += du(p);
  }
  return total;
}

/**
 * A data dir with a 1 MiB quota, a host-path workspace allowed for mounts and a CLI on them. `asPlainUser`
 * runs lbot as an unprivileged user (as root: uid 65532 through setpriv), whose walk cannot read a
 * `chmod 000` directory.
 */
function scenario(opts: { asPlainUser?: boolean } = {}) {
  const plain = opts.asPlainUser === true && isRoot;
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'lbot-quota-watch-')));
  roots.push(root);
  const dataDir = path.join(root, 'data');
  const ws = path.join(root, 'ws');
  const home = path.join(root, 'home');
  for (const d of [dataDir, ws, home]) mkdirSync(d);
  writeFileSync(path.join(dataDir, 'lbot.config.json'), JSON.stringify({ box: { workspace_quota_mb: 1, allowed_mount_roots: [ws] } }));
  if (plain) {
    chmodSync(root, 0o755);
    for (const p of [root, dataDir, ws, home, path.join(dataDir, 'lbot.config.json')]) chownSync(p, PLAIN_UID, PLAIN_UID);
  } else if (isRoot) chownSync(ws, 65532, 65532); // as root the sandbox runs as the unprivileged sandbox uid
  const lbot = async (args: string[]): Promise<Cli> => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: plain ? home : (process.env.HOME ?? home) };
    if (plain) env.TMPDIR = root;
    else if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR;
    const argv = [process.execPath, BIN, '--data-dir', dataDir, ...args];
    const [cmd, ...rest] = plain ? ['setpriv', '--reuid', String(PLAIN_UID), '--regid', String(PLAIN_UID), '--clear-groups', '--', ...argv] : argv;
    const r = await execa(cmd ?? 'false', rest, { reject: false, env, extendEnv: false, cwd: root, timeout: 60_000 });
    return { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  const json = async <T>(args: string[]): Promise<{ r: Cli; v: T }> => {
    const r = await lbot(['--json', ...args]);
    return { r, v: JSON.parse(r.stdout.trim().split('\n').at(-1) ?? 'null') as T };
  };
  cleanups.push(async () => {
    const { v } = await json<Array<{ session_id: string }>>(['box', 'sessions']);
    for (const s of v ?? []) await lbot(['box', 'rm', s.session_id]);
  });
  return { root, dataDir, ws, lbot, json, plain };
}

type Scenario = ReturnType<typeof scenario>;

/** Waits until `box status` lists a quota stop of `sid`. */
async function waitForStop(s: Scenario, sid: string, ms = 20_000): Promise<boolean> {
  return waitFor(async () => {
    const { v } = await s.json<{ quota_stops?: Array<{ session_id: string }> }>(['box', 'status']);
    return (v.quota_stops ?? []).some((q) => q.session_id === sid);
  }, ms);
}

/** Whether a process whose command line contains `needle` runs on this machine (sandboxed ones included). */
function running(needle: string): boolean {
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0').join(' ').includes(needle)) return true;
    } catch {
      // gone
    }
  }
  return false;
}

let tags = 0;
/** A word only one test's shell script contains, to find its processes by command line. */
const uniqueTag = () => `lbot-quota-writer-${process.pid}-${++tags}`;

const run = (s: Scenario, sid: string, script: string) => s.lbot(['box', 'exec', '--session', sid, '--host-path', s.ws, '--', 'sh', '-c', script]);

describe.skipIf(bwrapSkipReason !== null)(`the quota watcher on host-path workspaces${bwrapSkipReason ? ` (skipped: ${bwrapSkipReason})` : ''}`, () => {
  it('stops a background writer the exec left behind (one growing file) and the next exec reports box.quota_exceeded', async () => {
    const s = scenario();
    const tag = uniqueTag();
    const started = await run(s, 'q1', `(: ${tag}; while :; do head -c 65536 /dev/zero >> /workspace/f; sleep 0.05; done) >/dev/null 2>&1 & exit 0`);
    expect(started.exitCode, started.stderr).toBe(0);
    expect(running(tag)).toBe(true);
    expect(await waitFor(() => !running(tag), 20_000)).toBe(true); // the writer is dead
    const size = du(s.ws);
    await new Promise((r) => setTimeout(r, 1000));
    expect(du(s.ws)).toBe(size);
    expect(size).toBeLessThan(LIMIT + MARGIN);
    expect(await waitForStop(s, 'q1')).toBe(true);
    const next = await s.json<ErrorJson>(['box', 'exec', '--session', 'q1', '--host-path', s.ws, '--', 'true']);
    expect(next.r.exitCode).toBe(125);
    expect(next.v.error).toMatchObject({ code: 'box.quota_exceeded', details: { phase: 'background', limit_bytes: LIMIT, session_id: 'q1' } });
    expect(next.v.error.message).toContain('stopped');
    // Reported once; the workspace is still over quota, so the command after that is refused before it runs.
    const after = await s.json<ErrorJson>(['box', 'exec', '--session', 'q1', '--host-path', s.ws, '--', 'touch', '/workspace/marker']);
    expect(after.v.error).toMatchObject({ code: 'box.quota_exceeded', details: { phase: 'before' } });
    expect(existsSync(path.join(s.ws, 'marker'))).toBe(false);
  });

  it('stops a background writer of many files (25 MiB into a 1 MiB quota) within a bounded margin', async () => {
    const s = scenario();
    const tag = uniqueTag();
    const started = await run(
      s,
      'q2',
      `i=0; (: ${tag}; while [ $i -lt 400 ]; do i=$((i+1)); head -c 65536 /dev/zero > /workspace/f$i; sleep 0.05; done) >/dev/null 2>&1 & exit 0`,
    );
    expect(started.exitCode, started.stderr).toBe(0);
    expect(await waitFor(() => !running(tag), 20_000)).toBe(true);
    const size = du(s.ws);
    await new Promise((r) => setTimeout(r, 1000));
    expect(du(s.ws)).toBe(size);
    expect(size).toBeLessThan(LIMIT + MARGIN);
    expect(await waitForStop(s, 'q2')).toBe(true);
    const { v } = await s.json<Array<{ timestamp: string; code: string; message: string }>>(['box', 'errors']);
    expect(v.some((e) => e.code === 'box.quota_exceeded' && e.message.includes('session_id=q2'))).toBe(true);
  });

  it('stops a managed process that writes past the quota', async () => {
    const s = scenario();
    expect((await run(s, 'm1', 'true')).exitCode).toBe(0);
    const tag = uniqueTag();
    const start = await s.lbot([
      'box',
      'process',
      'start',
      '--session',
      'm1',
      '--id',
      'writer',
      '--',
      'sh',
      '-c',
      `: ${tag}; i=0; while [ $i -lt 400 ]; do i=$((i+1)); head -c 65536 /dev/zero > /workspace/p$i; sleep 0.05; done`,
    ]);
    expect(start.exitCode, start.stderr).toBe(0);
    expect(await waitFor(() => !running(tag), 20_000)).toBe(true);
    const size = du(s.ws);
    await new Promise((r) => setTimeout(r, 1000));
    expect(du(s.ws)).toBe(size);
    expect(size).toBeLessThan(LIMIT + MARGIN);
    expect(await waitForStop(s, 'm1')).toBe(true);
    const proc = await s.json<{ status: string }>(['box', 'process', 'status', '--session', 'm1', '--id', 'writer']);
    expect(proc.v.status).not.toBe('running');
    const next = await s.json<ErrorJson>(['box', 'process', 'start', '--session', 'm1', '--id', 'again', '--', 'true']);
    expect(next.r.exitCode).toBe(7);
    expect(next.v.error).toMatchObject({ code: 'box.quota_exceeded', details: { phase: 'background' } });
  });

  it('counts a directory made unreadable (chmod 000) in the command', async () => {
    const s = scenario();
    const r = await s.json<ErrorJson>([
      'box',
      'exec',
      '--session',
      'u1',
      '--host-path',
      s.ws,
      '--',
      'sh',
      '-c',
      'mkdir /workspace/d; head -c 2M /dev/zero > /workspace/d/f; chmod 000 /workspace/d',
    ]);
    expect(r.r.exitCode).toBe(125);
    expect(r.v.error).toMatchObject({ code: 'box.quota_exceeded', details: { phase: 'after' } });
  });
});

const plainSkip = ((): string | null => {
  if (bwrapSkipReason) return bwrapSkipReason;
  if (!isRoot) return null;
  if (!findExecutable('setpriv')) return 'setpriv (util-linux) is needed to run lbot as an unprivileged user';
  return null;
})();

describe.skipIf(plainSkip !== null)(
  `the quota as an unprivileged lbot, which cannot read a chmod 000 directory${plainSkip ? ` (skipped: ${plainSkip})` : ''}`,
  () => {
    it('refuses with box.quota_exceeded after and before the next exec, saying what it cannot read', async () => {
      const s = scenario({ asPlainUser: true });
      const probe = await s.lbot(['box', 'exec', '--', 'true']);
      if (probe.exitCode !== 0) throw new Error(`lbot as uid ${PLAIN_UID} cannot run sandboxes here: ${probe.stderr}`);
      const r = await s.json<ErrorJson>([
        'box',
        'exec',
        '--session',
        'u2',
        '--host-path',
        s.ws,
        '--',
        'sh',
        '-c',
        'mkdir /workspace/d; head -c 2M /dev/zero > /workspace/d/f; chmod 000 /workspace/d',
      ]);
      expect(r.r.exitCode).toBe(125);
      expect(r.v.error).toMatchObject({ code: 'box.quota_exceeded', details: { phase: 'after', reason: 'unreadable', path: path.join(s.ws, 'd') } });
      expect(r.v.error.message).toContain('cannot be read by lbot');
      // The session's watcher may find the directory first and stop the session; that stop is reported once,
      // and every exec after it is refused by the before-check.
      const touch = () => s.json<ErrorJson>(['box', 'exec', '--session', 'u2', '--host-path', s.ws, '--', 'touch', '/workspace/marker']);
      let next = await touch();
      expect(next.r.exitCode).toBe(125);
      expect(next.v.error).toMatchObject({ code: 'box.quota_exceeded', details: { reason: 'unreadable' } });
      if (next.v.error.details['phase'] === 'background') next = await touch();
      expect(next.r.exitCode).toBe(125);
      expect(next.v.error).toMatchObject({ code: 'box.quota_exceeded', details: { phase: 'before', reason: 'unreadable' } });
      expect(existsSync(path.join(s.ws, 'marker'))).toBe(false);
    });

    // The bytes stay under the limit, so the only thing that can stop the session is the directory lbot cannot read.
    it('stops the session when a background process hides bytes behind chmod 000', async () => {
      const s = scenario({ asPlainUser: true });
      const tag = uniqueTag();
      const started = await run(
        s,
        'u3',
        `(: ${tag}; sleep 1; mkdir /workspace/e; head -c 64K /dev/zero > /workspace/e/f; chmod 000 /workspace/e; sleep 600) >/dev/null 2>&1 & exit 0`,
      );
      expect(started.exitCode, started.stderr).toBe(0);
      expect(await waitFor(() => !running(tag), 20_000)).toBe(true);
      expect(await waitForStop(s, 'u3')).toBe(true);
      const next = await s.json<ErrorJson>(['box', 'exec', '--session', 'u3', '--host-path', s.ws, '--', 'true']);
      expect(next.r.exitCode).toBe(125);
      // The scan names the directory, or an entry of it when the chmod lands while the scan is inside it.
      const hidden = path.join(s.ws, 'e');
      expect(next.v.error).toMatchObject({ code: 'box.quota_exceeded', details: { phase: 'background', reason: 'unreadable' } });
      expect(String(next.v.error.details.path)).toSatisfy((p: string) => p === hidden || p.startsWith(`${hidden}/`));
    });
  },
);
