// `lbot skill install` from git, on the built CLI: the user's global git config never applies to an
// untrusted repository (hooks via core.hooksPath, filter drivers), and a clone is held to the install
// size budget (skill.too_large, nothing installed) whether it is the history or the checkout that is big.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { skillMd, tempDir } from './../integration/skill-zip.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin', 'lbot.js');
if (!existsSync(path.join(REPO, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` before the e2e tests');

const gitMissing = (await execa('git', ['--version'], { reject: false })).exitCode === 0 ? null : 'the git executable is not available';

/** The test's own git, with a clean config (so the attacker's gitconfig below never runs here). */
async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await execa('git', ['-c', 'user.name=lbot-test', '-c', 'user.email=test@lbot.invalid', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    extendEnv: false,
  });
  return r.stdout.trim();
}

/**
 * A bare repository holding one skill package (at its root, or in folder `sub`) plus `extra` files at
 * the root; returns it and its commit.
 */
async function skillRepo(dir: string, name: string, extra: Record<string, string | Buffer> = {}, sub = ''): Promise<{ bare: string; commit: string }> {
  const work = path.join(dir, `${name}-work`);
  await mkdir(path.join(work, sub), { recursive: true });
  await writeFile(path.join(work, sub, 'SKILL.md'), skillMd(name, `The ${name} skill`));
  for (const [file, body] of Object.entries(extra)) await writeFile(path.join(work, file), body);
  await git(work, 'init', '-q');
  await git(work, 'add', '-A');
  await git(work, 'commit', '-q', '-m', 'v1');
  const commit = await git(work, 'rev-parse', 'HEAD');
  const bare = path.join(dir, `${name}.git`);
  await git(dir, 'clone', '-q', '--bare', work, bare);
  return { bare, commit };
}

function lbot(dataDir: string, args: string[], env: Record<string, string>) {
  return execa(process.execPath, [BIN, '--data-dir', dataDir, ...args], {
    reject: false,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    extendEnv: false,
    timeout: 90_000,
  });
}

describe("git skill installs run git without the user's config", () => {
  it('a global gitconfig with core.hooksPath hooks and a filter driver never runs (branch and commit clones)', async (ctx) => {
    if (gitMissing) ctx.skip(gitMissing);
    const dir = await tempDir('lbot-skill-git-');
    const marker = path.join(dir, 'PWNED');
    // The attacker's (or merely the user's own) global config: hooks on every checkout and ref update,
    // and a smudge filter for the repository's .gitattributes.
    const home = path.join(dir, 'home');
    const hooks = path.join(home, 'hooks');
    await mkdir(hooks, { recursive: true });
    for (const hook of ['post-checkout', 'reference-transaction', 'post-merge', 'post-index-change']) {
      await writeFile(path.join(hooks, hook), `#!/bin/sh\necho ${hook} >> '${marker}'\n`);
      await chmod(path.join(hooks, hook), 0o755);
    }
    const gitconfig = `[core]\n\thooksPath = ${hooks}\n[filter "evil"]\n\tsmudge = "sh -c 'echo smudge >> ${marker}; cat'"\n`;
    await writeFile(path.join(home, '.gitconfig'), gitconfig);
    await mkdir(path.join(home, '.config', 'git'), { recursive: true });
    await writeFile(path.join(home, '.config', 'git', 'config'), gitconfig);
    const { bare, commit } = await skillRepo(dir, 'hooked', { '.gitattributes': '*.txt filter=evil\n', 'notes.txt': 'hello\n' });

    const dataDir = path.join(dir, 'data');
    const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') };
    const branch = await lbot(dataDir, ['skill', 'install', bare], env);
    const pinned = await lbot(dataDir, ['skill', 'install', '--ref', commit, '--name', 'hooked-pinned', bare], env);
    expect(existsSync(marker), existsSync(marker) ? `a hook or filter of the global gitconfig ran: ${await readFile(marker, 'utf8')}` : '').toBe(false);
    expect(branch.exitCode, branch.stderr).toBe(0);
    expect(pinned.exitCode, pinned.stderr).toBe(0);
    expect(existsSync(path.join(dataDir, 'skills', 'hooked', 'SKILL.md'))).toBe(true);
    expect(existsSync(path.join(dataDir, 'skills', 'hooked-pinned', 'SKILL.md'))).toBe(true);
  });
});

describe('git skill installs have a size budget', () => {
  /** Installs `bare` (at `ref` when given) under tight limits and expects skill.too_large with nothing installed. */
  async function expectTooLarge(dir: string, bare: string, name: string, limits: Record<string, number>, ref?: string): Promise<string> {
    const dataDir = path.join(dir, `data-${name}-${ref ? 'ref' : 'branch'}`);
    await mkdir(dataDir, { recursive: true });
    await writeFile(path.join(dataDir, 'lbot.config.json'), JSON.stringify({ skills: { install: limits } }));
    const r = await lbot(dataDir, ['--json', 'skill', 'install', ...(ref ? ['--ref', ref] : []), bare], { HOME: dir });
    expect(r.exitCode, r.stderr).toBe(7);
    expect(r.stdout + r.stderr).toContain('skill.too_large');
    const skillsDir = path.join(dataDir, 'skills');
    const left = existsSync(skillsDir) ? (await readdir(skillsDir)).filter((n) => n !== 'skills.lock.json') : [];
    expect(
      left.filter((n) => !n.startsWith('.')),
      `left in ${skillsDir}`,
    ).toEqual([]);
    expect(existsSync(path.join(skillsDir, name))).toBe(false);
    expect(existsSync(path.join(skillsDir, 'pkg'))).toBe(false);
    return r.stderr;
  }

  it('a commit-ref clone whose history is over max_archive_bytes is stopped with skill.too_large', async (ctx) => {
    if (gitMissing) ctx.skip(gitMissing);
    const dir = await tempDir('lbot-skill-git-');
    // The big file sits outside the package folder: only the clone itself can see it.
    const { bare, commit } = await skillRepo(dir, 'bighistory', { 'blob.bin': randomBytes(3 * 1024 * 1024) }, 'pkg');
    const limits = { max_archive_bytes: 256 * 1024, max_uncompressed_bytes: 64 * 1024 * 1024, max_file_bytes: 64 * 1024 * 1024 };
    expect(await expectTooLarge(dir, bare, 'bighistory', limits, commit)).toContain('max_archive_bytes');
    expect(await expectTooLarge(dir, bare, 'bighistory', limits)).toContain('max_archive_bytes');
  });

  it('a clone whose checkout is over the unpacked budget (small, compressible history) is stopped with skill.too_large', async (ctx) => {
    if (gitMissing) ctx.skip(gitMissing);
    const dir = await tempDir('lbot-skill-git-');
    const { bare, commit } = await skillRepo(dir, 'bigcheckout', { 'zeros.bin': Buffer.alloc(8 * 1024 * 1024) }, 'pkg');
    const limits = { max_archive_bytes: 256 * 1024, max_uncompressed_bytes: 512 * 1024, max_file_bytes: 64 * 1024 * 1024 };
    expect(await expectTooLarge(dir, bare, 'bigcheckout', limits, commit)).toContain('max_uncompressed_bytes');
    expect(await expectTooLarge(dir, bare, 'bigcheckout', limits)).toContain('max_uncompressed_bytes');
  });
});
