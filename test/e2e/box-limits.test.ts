// Box limits for a non-root user, end to end on the built binary (box.md §6.6 "Resource limits"): the
// built CLI runs as uid 65534 (setpriv), which cannot write /sys/fs/cgroup here. `auto` falls back to
// rlimits and says so on stderr (and in box status / doctor); `limits: cgroup` refuses with box.unavailable.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { findExecutable, probeCommand } from '../../src/runtime/box/host-tools.js';
import { cgroupHost, findCgroupTree } from '../../src/runtime/box/limits.js';
import { bwrapSkipReason } from '../integration/box/helpers.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin', 'lbot.js');
if (!existsSync(path.join(REPO, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` before the e2e tests');
const NOBODY = 65534;

/** Why this suite cannot run here, or null. */
async function skipReason(): Promise<string | null> {
  if (bwrapSkipReason) return bwrapSkipReason;
  if (process.getuid?.() !== 0) return 'needs root to run the CLI as another user with setpriv';
  if (!findExecutable('setpriv')) return 'setpriv (util-linux) is not installed';
  const asNobody = ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--'];
  const smoke = await probeCommand(
    [
      ...asNobody,
      'bwrap',
      '--unshare-all',
      '--ro-bind',
      '/usr',
      '/usr',
      '--symlink',
      'usr/bin',
      '/bin',
      '--symlink',
      'usr/lib',
      '/lib',
      '--symlink',
      'usr/lib64',
      '/lib64',
      '--',
      '/usr/bin/true',
    ],
    10_000,
  );
  if (!smoke.ok) return `uid ${NOBODY} cannot create bwrap sandboxes here (${smoke.detail || 'unprivileged user namespaces off'})`;
  // The point is a user without a cgroup tree: skip where uid 65534 would find a writable one.
  const ownedByNobody = (p: string) => {
    try {
      const st = statSync(p);
      return (st.uid === NOBODY && (st.mode & 0o200) !== 0) || (st.mode & 0o002) !== 0;
    } catch {
      return false;
    }
  };
  const found = findCgroupTree({ ...cgroupHost(), uid: NOBODY, canWrite: ownedByNobody });
  if ('plan' in found) return `uid ${NOBODY} might own a delegated cgroup subtree here (${found.plan.mode})`;
  return null;
}
const skip = await skipReason();
if (skip) console.warn(`skipping box limits e2e tests: ${skip}`);

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A data dir uid 65534 can write, with `box.*` config, and the built CLI run as that user. */
function asNobody(box: Record<string, unknown>) {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'lbot-limits-e2e-')));
  roots.push(root);
  chmodSync(root, 0o777);
  const dataDir = path.join(root, 'data');
  mkdirSync(dataDir, { mode: 0o777 });
  chmodSync(dataDir, 0o777);
  writeFileSync(path.join(dataDir, 'lbot.config.json'), JSON.stringify({ box: { workspace_quota_mb: 0, ...box } }), { mode: 0o644 });
  return async (args: string[]) => {
    const r = await execa(
      'setpriv',
      [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', process.execPath, BIN, '--data-dir', dataDir, ...args],
      {
        reject: false,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root, TMPDIR: root, LANG: 'C.UTF-8' },
        extendEnv: false,
        cwd: root,
        timeout: 120_000,
      },
    );
    return { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
}

describe.skipIf(skip !== null)(`box limits as an unprivileged user${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('auto falls back to rlimits with one warning on stderr; box status and doctor show the mode and why', async () => {
    const lbot = asNobody({});
    const r = await lbot(['box', 'exec', '--timeout', '20', '--', 'sh', '-c', 'id -u; ulimit -t']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${NOBODY}\n25`);
    const warnings = r.stderr.split('\n').filter((l) => l.startsWith('lbot: warning: box limits fall back to rlimits'));
    expect(warnings, r.stderr).toHaveLength(1);
    expect(warnings[0]).toContain(`by uid ${NOBODY}`);
    expect(warnings[0]).toContain('nothing caps a session as a whole');

    const status = await lbot(['box', 'status']);
    expect(status.stdout).toContain('(limits: rlimit)');
    expect(status.stderr).toContain('lbot: warning: box limits fall back to rlimits');
    const doctor = await lbot(['doctor']);
    expect(doctor.stdout).toMatch(/ok +bwrap +rlimits, not cgroups \(/);
    expect(doctor.stderr).toContain('lbot: warning: box limits fall back to rlimits');
  });

  it('limits: cgroup refuses to start a session without a usable cgroup tree (box.unavailable, exit 125)', async () => {
    const lbot = asNobody({ bwrap: { limits: 'cgroup' } });
    const r = await lbot(['--json', 'box', 'exec', '--', 'sh', '-c', 'echo should-not-run']);
    expect(r.exitCode, r.stderr).toBe(125);
    expect(r.stdout).not.toContain('should-not-run');
    const err = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? 'null') as { ok: boolean; error: { code: string; message: string } };
    expect(err.ok).toBe(false);
    expect(err.error.code).toBe('box.unavailable');
    expect(err.error.message).toContain('box.bwrap.limits is cgroup, but no usable cgroup tree');
    expect(err.error.message).toContain(`by uid ${NOBODY}`);
  });
});
