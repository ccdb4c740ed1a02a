// Skills projected into a real bubblewrap sandbox with the mount plan: read-only packages, scripts run
// only after activation, one skill per exec, vanished packages skipped (acceptance AC-139…AC-141).
// The exec wrapper here stands in for the tool manager's `exec`; it applies the same skills rules.
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { LbotError } from '../../src/core/errors.js';
import {
  activateSkill,
  checkExecSkills,
  createActivationState,
  skillMountPlan,
  type ActivationState,
  type SkillMount,
} from '../../src/core/skills/activation.js';
import { boundSkills, loadSkillCatalog, type SkillCatalogEntry } from '../../src/core/skills/index.js';
import { installSkills } from '../../src/core/skills/install.js';
import { DEFAULT_SKILL_LIMITS } from '../../src/core/skills/limits.js';
import { verifySkills } from '../../src/core/skills/verify.js';
import { buildZip, skillMd, tempDir, writeZip } from './skill-zip.js';
import { withReason } from '../helpers/skip.js';

const HELLO = path.resolve(import.meta.dirname, '../../fixtures/skills/hello-skill.zip');

const probe = await execa('bwrap', ['--unshare-all', '--ro-bind', '/', '/', 'true'], { reject: false });
const bwrapReason =
  probe.exitCode === 0 ? null : `bubblewrap cannot start a sandbox here (${(probe.stderr || probe.shortMessage || 'unknown error').split('\n')[0]})`;
if (bwrapReason) console.warn(`skipping skill projection tests: ${bwrapReason}`);

function systemBinds(): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const top of ['/bin', '/lib', '/lib64', '/sbin']) {
    if (!existsSync(top)) continue;
    if (lstatSync(top).isSymbolicLink()) args.push('--symlink', readlinkSync(top), top);
    else args.push('--ro-bind', top, top);
  }
  return args;
}

async function boxExec(workspace: string, mounts: readonly SkillMount[], command: string, workdir = '/workspace') {
  const binds = mounts.flatMap((m) => [m.mode === 'ro' ? '--ro-bind' : '--bind', m.host_path, m.mount_path]);
  const args = [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    ...systemBinds(),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--bind',
    workspace,
    '/workspace',
    ...binds,
    '--chdir',
    workdir,
    '/bin/sh',
    '-c',
    command,
  ];
  return execa('bwrap', args, { reject: false, timeout: 30_000, env: { PATH: '/usr/bin:/bin' }, extendEnv: false });
}

type Run = { state: ActivationState; visible: SkillCatalogEntry[]; mounts: SkillMount[]; warnings: string[]; workspace: string };

async function setupRun(skills: string[], extra?: (dataDir: string) => Promise<void>): Promise<Run & { dataDir: string }> {
  const dir = await tempDir();
  const dataDir = path.join(dir, 'data');
  const ctx = {
    dataDir,
    limits: DEFAULT_SKILL_LIMITS,
    fetcher: { gitClone: () => Promise.reject(new Error('offline')), download: () => Promise.reject(new Error('offline')) },
  };
  await installSkills({ source: HELLO }, ctx);
  await installSkills(
    {
      source: await writeZip(
        dir,
        'other.zip',
        buildZip([
          { name: 'other/SKILL.md', data: skillMd('other') },
          { name: 'other/x.sh', data: 'echo other\n', mode: 0o100755 },
        ]),
      ),
    },
    ctx,
  );
  await extra?.(dataDir);
  const { visible } = boundSkills({ skills }, await loadSkillCatalog(dataDir));
  const plan = skillMountPlan(visible, (p) => existsSync(p));
  const workspace = path.join(dir, 'workspace');
  await mkdir(workspace);
  return { dataDir, state: createActivationState(), visible, mounts: plan.mounts, warnings: plan.warnings, workspace };
}

/** What the tool manager's exec does with skills: the activation rule first, then the box. */
async function execTool(run: Run, command: string, workdir?: string) {
  checkExecSkills(run.state, run.visible, { command, workdir });
  return boxExec(run.workspace, run.mounts, command, workdir);
}

async function refusal(p: Promise<unknown>): Promise<LbotError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof LbotError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe.skipIf(bwrapReason !== null)(withReason('skills in a bubblewrap box', bwrapReason), () => {
  it('AC-139: exec of a skill script is refused until activate, then runs; two skills in one exec are refused', async () => {
    const run = await setupRun(['hello-skill', 'other']);
    const first = await refusal(execTool(run, 'sh /workspace/.skills/hello-skill/run.sh'));
    expect(first.message).toContain('must be activated first');
    activateSkill(run.state, run.visible, { skill_name: 'hello-skill' });
    const second = await execTool(run, 'sh /workspace/.skills/hello-skill/run.sh');
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).toBe('hello from hello-skill');
    const inDir = await execTool(run, './run.sh', '/workspace/.skills/hello-skill');
    expect(inDir.stdout).toBe('hello from hello-skill');
    activateSkill(run.state, run.visible, { skill_name: 'other' });
    const both = await refusal(execTool(run, 'sh /workspace/.skills/hello-skill/run.sh; sh /workspace/.skills/other/x.sh'));
    expect(both.message).toContain('only one skill package');
  });

  it('activate refuses a skill that is installed but not bound, and it is not mounted', async () => {
    const run = await setupRun(['hello-skill']);
    expect((await refusal(Promise.resolve().then(() => activateSkill(run.state, run.visible, { skill_name: 'other' })))).details.reason).toBe(
      'skill_not_bound',
    );
    expect(run.mounts.map((m) => m.mount_path)).toEqual(['/workspace/.skills/hello-skill']);
    const ls = await boxExec(run.workspace, run.mounts, 'ls /workspace/.skills');
    expect(ls.stdout.split('\n')).toEqual(['hello-skill']);
  });

  it('AC-140: skills are mounted read-only at /workspace/.skills/<name>, even when activated', async () => {
    const run = await setupRun(['hello-skill']);
    activateSkill(run.state, run.visible, { skill_name: 'hello-skill' });
    expect(run.mounts).toEqual([expect.objectContaining({ mount_path: '/workspace/.skills/hello-skill', mode: 'ro' })]);
    const touch = await execTool(run, 'touch /workspace/.skills/hello-skill/x');
    expect(touch.exitCode).not.toBe(0);
    expect(touch.stderr).toMatch(/Read-only file system/i);
    const overwrite = await execTool(run, 'echo evil > /workspace/.skills/hello-skill/run.sh');
    expect(overwrite.exitCode).not.toBe(0);
    expect((await verifySkills(run.dataDir)).ok).toBe(true);
    const ws = await boxExec(run.workspace, run.mounts, 'echo ok > /workspace/out.txt && cat /workspace/out.txt');
    expect(ws.stdout).toBe('ok');
  });

  it('AC-141: a bound skill whose package folder vanished is skipped with a warning and exec still works', async () => {
    const run = await setupRun(['hello-skill', 'other'], async (dataDir) => {
      await rm(path.join(dataDir, 'skills', 'other'), { recursive: true });
    });
    // The catalog no longer has `other`; a stale catalog entry is skipped by the mount plan.
    const stale = skillMountPlan(
      [...run.visible, { name: 'other', display_name: 'other', description: '', instructions: '', package_root: path.join(run.dataDir, 'skills', 'other') }],
      (p) => existsSync(p),
    );
    expect(stale.mounts.map((m) => m.mount_path)).toEqual(['/workspace/.skills/hello-skill']);
    expect(stale.warnings).toEqual([expect.stringContaining('skill other')]);
    const r = await boxExec(run.workspace, stale.mounts, 'true');
    expect(r.exitCode).toBe(0);
  });
});
