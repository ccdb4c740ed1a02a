// Socket directories an attacker prepared: when the data dir path is too long for a unix socket, lbot
// falls back to `<tmp>/lbot-<uid>`. Another local user can create that path first (a symlink to a
// directory they own, or a world-writable directory of theirs). lbot must refuse it, not put its
// managed-process relay or MCP bridge socket there. TMPDIR points each test at its own temp root, so
// the `<tmp>/lbot-<uid>` here is the test's and never the machine's shared one.
import { chownSync, chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/core/config.js';
import { LbotError } from '../../../src/core/errors.js';
import { BoxLayout } from '../../../src/runtime/box/layout.js';
import { createBoxService } from '../../../src/runtime/box/service.js';
import { bwrapSkipReason } from '../../integration/box/helpers.js';
import { dump, done, LBOT_BIN, reports, scenario } from './harness.js';
import { thrown } from '../../helpers/thrown.js';

const uid = process.getuid?.() ?? -1;
const OTHER_UID = 65534;
const notRoot = uid === 0 ? null : 'needs root to create a directory owned by another uid (chown)';
const roots: string[] = [];
const boxDataDirs: string[] = [];

afterAll(async () => {
  for (const d of boxDataDirs) {
    const box = createBoxService({ dataDir: d, config: ConfigSchema.parse({}).box });
    for (const s of await box.sessions()) await box.removeSession(s.session_id).catch(() => undefined);
  }
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

type Trap = 'symlink' | 'foreign' | 'open';

/**
 * A temp root (used as TMPDIR) whose `lbot-<uid>` is a trap: a symlink to another user's 0777 dir,
 * another user's 0777 dir, or this user's own 0777 dir. Returns the root and the dir the attacker watches.
 */
function trap(kind: Trap): { tmp: string; watched: string } {
  const tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'lbot-sockdir-')));
  roots.push(tmp);
  const target = path.join(tmp, `lbot-${uid}`);
  const watched = kind === 'symlink' ? path.join(tmp, 'attacker') : target;
  mkdirSync(watched);
  chmodSync(watched, 0o777);
  if (kind !== 'open') chownSync(watched, OTHER_UID, OTHER_UID);
  if (kind === 'symlink') symlinkSync(watched, target);
  return { tmp, watched };
}

/** A data dir whose `box/run/<hash>.sock` and `mcp/bridge/<pid>.sock` are longer than sockaddr_un allows. */
function longDataDir(root: string): string {
  return path.join(root, 'd'.repeat(40), 'e'.repeat(40), 'data');
}

const refusal = (fn: () => unknown): LbotError => thrown(fn, LbotError);

describe('the <tmp>/lbot-<uid> socket fallback refuses directories it cannot trust', () => {
  for (const kind of ['symlink', 'foreign', 'open'] as const) {
    it(`box socket path: a ${kind} lbot-<uid> is refused with box.unavailable, nothing created through it`, (ctx) => {
      if (kind !== 'open' && notRoot) ctx.skip(notRoot);
      const { tmp, watched } = trap(kind);
      const saved = process.env.TMPDIR;
      process.env.TMPDIR = tmp;
      try {
        const err = refusal(() => new BoxLayout(longDataDir(tmp)).socketPath('s1', 'p1'));
        expect(err.code).toBe('box.unavailable');
        expect(err.message).toContain(`lbot-${uid}`);
      } finally {
        if (saved === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = saved;
      }
      expect(readdirSync(watched)).toEqual([]);
    });
  }

  it('box socket path: a missing lbot-<uid> is created 0700 and used; a fitting path stays in the data dir', () => {
    const tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'lbot-sockdir-')));
    roots.push(tmp);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      const sock = new BoxLayout(longDataDir(tmp)).socketPath('s1', 'p1');
      expect(path.dirname(sock)).toBe(path.join(tmp, `lbot-${uid}`));
      const st = lstatSync(path.dirname(sock));
      expect(st.isDirectory() && (st.mode & 0o777) === 0o700).toBe(true);
      const short = new BoxLayout(path.join(tmp, 'd')).socketPath('s1', 'p1');
      expect(path.dirname(short)).toBe(path.join(tmp, 'd', 'box', 'run'));
      expect(lstatSync(path.dirname(short)).mode & 0o777).toBe(0o700);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  it('lbot box process start (real bwrap): a symlinked lbot-<uid> is refused, the attacker dir stays empty', async (ctx) => {
    if (bwrapSkipReason) ctx.skip(bwrapSkipReason);
    if (notRoot) ctx.skip(notRoot);
    const { tmp, watched } = trap('symlink');
    chmodSync(tmp, 0o711); // the sandbox uid traverses TMPDIR to its session base
    const dataDir = longDataDir(tmp);
    boxDataDirs.push(dataDir);
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', TMPDIR: tmp };
    const r = await execa(
      process.execPath,
      [LBOT_BIN, '--data-dir', dataDir, '--json', 'box', 'process', 'start', '--session', 'p1', '--id', 'a', '--', 'sleep', '600'],
      { reject: false, env, extendEnv: false, timeout: 120_000 },
    );
    expect(r.exitCode, r.stderr).not.toBe(0);
    expect(r.stdout + r.stderr).toContain('box.unavailable');
    expect(r.stderr).toContain('refusing to use');
    expect(readdirSync(watched)).toEqual([]);
  });

  it('lbot run: a foreign lbot-<uid> costs the run its MCP bridge (with a warning), never a socket there', async (ctx) => {
    if (notRoot) ctx.skip(notRoot);
    const s = await scenario();
    const { tmp, watched } = trap('foreign');
    const dataDir = longDataDir(tmp);
    const argv = await s.runArgs([dump, done()], { json: true });
    const r = await s.lbot(['--data-dir', dataDir, '--plugins', s.plugins.pluginsDir, ...argv], { globals: false, env: { TMPDIR: tmp } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain('refusing to use');
    expect(r.stderr).toContain('has no MCP bridge');
    const [context] = reports(r.stdout) as Array<{ metadata: Record<string, unknown> }>;
    expect(context?.metadata).toBeDefined();
    expect(context?.metadata.mcp_bridge).toBeUndefined();
    expect(readdirSync(watched)).toEqual([]);
    expect(existsSync(path.join(tmp, 'attacker'))).toBe(false);
  });
});
