// Limits fail closed on real bwrap sandboxes (box.md §6.6 "Resource limits"): a failed cgroup join fails
// the exec and kills it, `limits: cgroup` without a usable tree is box.unavailable, rlimit mode is announced,
// caps memory by RLIMIT_DATA (JIT runtimes still start) and CPU time of one-shot commands.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/core/config.js';
import { LbotError } from '../../../src/core/errors.js';
import { BwrapBackend } from '../../../src/runtime/box/bwrap.js';
import { NODE_MOUNT } from '../../../src/runtime/box/bwrap-args.js';
import { createSessionCgroup, joinCgroup, probeLimits, removeSessionCgroup } from '../../../src/runtime/box/limits.js';
import { createBoxService, type BoxService } from '../../../src/runtime/box/service.js';
import { boxFixture, bwrapSkipReason, disposeFixture, limitsMode, waitFor, type BoxFixture } from './helpers.js';

const fixtures: BoxFixture[] = [];
const temps: string[] = [];
const services: BoxService[] = [];
afterEach(async () => {
  while (fixtures.length > 0) {
    const f = fixtures.pop();
    if (f) await disposeFixture(f);
  }
  for (const box of services.splice(0)) for (const s of await box.sessions()) await box.removeSession(s.session_id).catch(() => undefined);
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
});

function temp(): string {
  const d = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'lbot-limits-it-')));
  temps.push(d);
  return d;
}

async function failure(p: Promise<unknown>): Promise<LbotError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof LbotError)) throw new Error(`expected an LbotError, got ${String(err)}`);
  return err;
}

/** A box service whose bwrap backend sees `cgroupRoot` as /sys/fs/cgroup. */
function serviceOn(cgroupRoot: string, limits: 'auto' | 'cgroup', warnings: string[]): BoxService {
  const root = temp();
  const config = ConfigSchema.parse({ box: { backend: 'bwrap', workspace_quota_mb: 0, bwrap: { limits } } }).box;
  const bwrap = new BwrapBackend({
    bin: 'bwrap',
    baseDir: path.join(root, 'bwrap'),
    limits,
    nodeBinary: process.execPath,
    cgroupRoot,
    warn: (m) => warnings.push(m),
  });
  const box = createBoxService({ dataDir: path.join(root, 'data'), config, backends: { bwrap } });
  services.push(box);
  return box;
}

const cgroupSkip =
  bwrapSkipReason ?? (limitsMode === 'cgroup1' || limitsMode === 'cgroup2' ? null : `no writable cgroup tree here (limits mode ${limitsMode})`);

describe.skipIf(bwrapSkipReason !== null)(`box limits on bwrap${bwrapSkipReason ? ` (skipped: ${bwrapSkipReason})` : ''}`, () => {
  it.skipIf(cgroupSkip !== null)(
    `a failed cgroup join fails the exec with box.unavailable and the command never runs${cgroupSkip ? ` (skipped: ${cgroupSkip})` : ''}`,
    async () => {
      // Execs through the exec agent never join a cgroup (the agent is in it from the start): the join is the nsenter path's.
      const f = boxFixture({ bwrap: { exec_agent: false } });
      fixtures.push(f);
      await f.box.exec({ session_id: 'j', cmd: 'true' });
      const recordFile = f.box.layout.recordFile('j');
      const record = JSON.parse(readFileSync(recordFile, 'utf8')) as { backend_state: { cgroups: string[]; workspace_dir: string } };
      const [first] = record.backend_state.cgroups;
      if (first === undefined) throw new Error('the session has no cgroup');
      // Point the session at a cgroup that existed and was removed.
      const removed = path.join(path.dirname(first), `removed-${process.pid}`);
      mkdirSync(removed);
      rmdirSync(removed);
      record.backend_state.cgroups = [removed, ...record.backend_state.cgroups.slice(1)];
      writeFileSync(recordFile, JSON.stringify(record));

      const marker = path.join(record.backend_state.workspace_dir, 'ran');
      const err = await failure(f.box.exec({ session_id: 'j', cmd: 'touch /workspace/ran; sleep 30', timeout_sec: 60 }));
      expect(err.code).toBe('box.unavailable');
      expect(err.details).toMatchObject({ reason: 'limits_unavailable', cgroup: removed, errno: 'ENOENT' });
      expect(err.message).toContain('stopped instead of running without its limits');
      // Give a released command time to show itself: it must not have run.
      await new Promise((r) => setTimeout(r, 500));
      expect(existsSync(marker)).toBe(false);

      // A managed process is refused the same way.
      const perr = await failure(f.box.startProcess('j', { process_id: 'p', command: 'sh', args: ['-c', 'touch /workspace/ran; sleep 30'] }));
      expect(perr.code).toBe('box.unavailable');
      expect(perr.message).toContain(removed);
      await new Promise((r) => setTimeout(r, 500));
      expect(existsSync(marker)).toBe(false);
    },
  );

  it.skipIf(cgroupSkip !== null)(
    `joining a real session cgroup: a process that already exited is skipped, a live one is moved${cgroupSkip ? ` (skipped: ${cgroupSkip})` : ''}`,
    async () => {
      const probe = probeLimits('cgroup');
      if (!probe.usable) throw new Error(probe.reason);
      const dirs = createSessionCgroup(probe.plan, `join-test-${process.pid}`, { cpus: 1, memory_mb: 64, pids_limit: 16 });
      try {
        const gone = spawn('true');
        await new Promise((r) => gone.on('exit', r));
        expect(() => joinCgroup(dirs, gone.pid ?? 0)).not.toThrow();
        const live = spawn('sleep', ['30']);
        try {
          joinCgroup(dirs, live.pid ?? 0);
          const own = readFileSync(`/proc/${live.pid}/cgroup`, 'utf8');
          expect(own).toContain(`/join-test-${process.pid}`);
        } finally {
          live.kill('SIGKILL');
          await new Promise((r) => live.on('exit', r));
        }
      } finally {
        await removeSessionCgroup(dirs);
      }
    },
  );

  it('limits: cgroup without a usable cgroup tree: starting a session is box.unavailable naming what is missing', async () => {
    const empty = temp();
    const warnings: string[] = [];
    const box = serviceOn(empty, 'cgroup', warnings);
    const err = await failure(box.exec({ cmd: 'echo should-not-run' }));
    expect(err.code).toBe('box.unavailable');
    expect(err.message).toContain('box.bwrap.limits is cgroup, but no usable cgroup tree');
    expect(err.message).toContain(`no cgroup v1 memory hierarchy at ${path.join(empty, 'memory')}`);
    expect(await box.sessions()).toEqual([]);
    const status = await box.status();
    expect(status.available).toBe(false);
    expect(status.backend.reason).toContain('no usable cgroup tree');
  });

  it('auto without a usable tree: rlimits with a warning; memory by RLIMIT_DATA (Node still starts), CPU time for commands only', async () => {
    const empty = temp();
    const warnings: string[] = [];
    const box = serviceOn(empty, 'auto', warnings);
    const { result, effective_spec: spec } = await box.exec({ session_id: 'r', cmd: 'ulimit -t; ulimit -d; ulimit -v', timeout_sec: 10 });
    const dataKb = spec.memory_mb * 1024;
    expect(result.stdout).toBe(`15\n${dataKb}\nunlimited\n`);
    // A JIT runtime reserves far more address space than memory_mb; it must still run, and still be capped.
    const node = await box.exec({ session_id: 'r', cmd: `${NODE_MOUNT} -e 'console.log("node", process.version)'` });
    expect(node.result.stdout, node.result.stderr).toMatch(/^node v\d+/);
    const hog = await box.exec({ cmd: `${NODE_MOUNT} -e 'const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1))'`, memory_mb: 64, timeout_sec: 30 });
    expect(hog.result.status).toBe('completed');
    expect(hog.result.exit_code).not.toBe(0);
    expect(warnings.filter((w) => w.includes('fall back to rlimits'))).toHaveLength(1);
    expect(warnings[0]).toContain(`no cgroup v1 memory hierarchy at ${path.join(empty, 'memory')}`);
    const status = await box.status();
    expect(status.backend).toMatchObject({ name: 'bwrap', limits_mode: 'rlimit' });
    expect(status.backend.reason).toContain('rlimits, not cgroups');

    // Managed processes (MCP servers: Node reserves large virtual memory) get RLIMIT_DATA, neither RLIMIT_AS
    // nor RLIMIT_CPU (they have no timeout); a Node server starts under it.
    await box.startProcess('r', { process_id: 'm', command: 'sh', args: ['-c', 'echo "$(ulimit -v) $(ulimit -t) $(ulimit -d)" > /tmp/limits; sleep 30'] });
    await box.startProcess('r', {
      process_id: 'n',
      command: NODE_MOUNT,
      args: ['-e', 'require("fs").writeFileSync("/tmp/node-up", "up"); setInterval(() => {}, 1000)'],
    });
    let seen = '';
    expect(
      await waitFor(async () => {
        seen = (await box.exec({ session_id: 'r', cmd: 'cat /tmp/limits 2>/dev/null || true' })).result.stdout;
        return seen !== '';
      }, 10_000),
    ).toBe(true);
    expect(seen).toBe(`unlimited unlimited ${dataKb}\n`);
    expect(await waitFor(async () => (await box.exec({ session_id: 'r', cmd: 'cat /tmp/node-up 2>/dev/null || true' })).result.stdout === 'up', 10_000)).toBe(
      true,
    );
  });
});
