// Installing into a data dir through the core API: acceptance AC-130…AC-137, AC-221, the lock, verify,
// --frozen, git sources and interrupted installs.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { LbotError } from '../../src/core/errors.js';
import type { SkillFetcher } from '../../src/core/skills/fetcher.js';
import { installFrozen } from '../../src/core/skills/frozen.js';
import { installSkills, previewInstall, type InstallContext, type InstallOptions } from '../../src/core/skills/install.js';
import { DEFAULT_SKILL_LIMITS } from '../../src/core/skills/limits.js';
import { acquireSkillMutex, readLock } from '../../src/core/skills/lock.js';
import { getSkill, listSkills, readSkillFile, removeSkill, skillsRoot } from '../../src/core/skills/store.js';
import { verifySkills } from '../../src/core/skills/verify.js';
import { createSkillFetcher } from '../../src/runtime/skills/fetcher.js';
import { buildZip, skillMd, tempDir, writeZip } from './skill-zip.js';
import { withReason } from '../helpers/skip.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/skills');
const fixture = (name: string) => path.join(FIXTURES, name);

/** A fetcher that fails the test if anything tries the network. */
const offline: SkillFetcher = {
  gitClone: () => Promise.reject(new Error('network used')),
  download: () => Promise.reject(new Error('network used')),
};

async function setup(fetcher: SkillFetcher = offline): Promise<{ dir: string; dataDir: string; ctx: InstallContext }> {
  const dir = await tempDir();
  const dataDir = path.join(dir, 'data');
  return { dir, dataDir, ctx: { dataDir, limits: DEFAULT_SKILL_LIMITS, fetcher, cwd: dir } };
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

/** Every file under `root` with its bytes' digest: a byte-for-byte snapshot. */
async function snapshot(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  if (!existsSync(root)) return out;
  const walk = async (rel: string): Promise<void> => {
    for (const name of (await readdir(path.join(root, rel))).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = await stat(path.join(root, r));
      if (st.isDirectory()) {
        out[`${r}/`] = (st.mode & 0o777).toString(8);
        await walk(r);
      } else
        out[r] = `${(st.mode & 0o777).toString(8)} ${createHash('sha256')
          .update(await readFile(path.join(root, r)))
          .digest('hex')}`;
    }
  };
  await walk('');
  return out;
}

const install = (ctx: InstallContext, opts: InstallOptions) => installSkills(opts, ctx);

describe('install from a zip (AC-130, AC-131)', () => {
  it('installs, lists with its description, shows instructions and provenance, and records the lock', async () => {
    const { dataDir, ctx } = await setup();
    const r = await install(ctx, { source: fixture('hello-skill.zip') });
    expect(r.skills).toHaveLength(1);
    expect(r.skills[0]).toMatchObject({ name: 'hello-skill', replaced: false, previous_sha256: null });
    const list = await listSkills(dataDir);
    expect(list.map((s) => [s.name, s.description])).toEqual([['hello-skill', 'Says hello']]);
    const shown = await getSkill(dataDir, 'hello-skill');
    expect(shown.instructions).toContain('Run `sh run.sh`');
    expect(shown.package_root).toBe(path.join(skillsRoot(dataDir), 'hello-skill'));
    expect(shown.provenance).toMatchObject({ source: fixture('hello-skill.zip'), source_type: 'zip', sha256: r.skills[0]?.sha256 });
    expect(Date.parse(shown.provenance?.installed_at ?? '')).not.toBeNaN();
    const lock = JSON.parse(await readFile(path.join(dataDir, 'skills.lock.json'), 'utf8')) as { skills: Record<string, { sha256: string }> };
    expect(lock.skills['hello-skill']?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await stat(path.join(shown.package_root, 'run.sh'))).mode & 0o777).toBe(0o755);
    expect((await readSkillFile(dataDir, 'hello-skill', 'run.sh')).content).toContain('hello from hello-skill');
    expect(existsSync(path.join(dataDir, '.skills-staging'))).toBe(false);
  });

  it('--preview lists name, description and files and leaves the data dir byte-for-byte unchanged', async () => {
    const { dataDir, ctx } = await setup();
    await install(ctx, { source: fixture('hello-skill.zip') });
    const before = await snapshot(dataDir);
    const preview = await previewInstall({ source: fixture('hello-skill.zip') }, ctx);
    expect(preview.skills).toEqual([
      expect.objectContaining({ name: 'hello-skill', description: 'Says hello', files: ['SKILL.md', 'run.sh'], exists: true, errors: [] }),
    ]);
    expect(await snapshot(dataDir)).toEqual(before);
    const fresh = await setup();
    await previewInstall({ source: fixture('hello-skill.zip') }, fresh.ctx);
    expect(existsSync(fresh.dataDir)).toBe(false);
  });
});

describe('refused archives (AC-132, AC-134)', () => {
  it.each(['traversal.zip', 'backslash.zip', 'absolute.zip', 'drive-letter.zip', 'nul-name.zip', 'symlink.zip', 'dotdot-normalised.zip'])(
    '%s: exit-4 code skill.unsafe_path, nothing outside or inside the skills root',
    async (name) => {
      const { dataDir, ctx } = await setup();
      const err = await refusal(install(ctx, { source: fixture(name) }));
      expect(err.code).toBe('skill.unsafe_path');
      expect(existsSync(path.join(dataDir, 'evil.txt'))).toBe(false);
      expect(existsSync(path.join(skillsRoot(dataDir), '..', 'evil.txt'))).toBe(false);
      expect(existsSync('/tmp/lbot-abs.txt')).toBe(false);
      expect(await listSkills(dataDir)).toEqual([]);
      expect(existsSync(path.join(dataDir, 'skills.lock.json'))).toBe(false);
      expect(existsSync(path.join(dataDir, '.skills-staging'))).toBe(false);
    },
  );

  it('corrupt.zip fails with skill.invalid_archive and no-skillmd.zip with skill.missing_manifest', async () => {
    const { dataDir, ctx } = await setup();
    expect((await refusal(install(ctx, { source: fixture('corrupt.zip') }))).code).toBe('skill.invalid_archive');
    expect((await refusal(install(ctx, { source: fixture('no-skillmd.zip') }))).code).toBe('skill.missing_manifest');
    expect(await listSkills(dataDir)).toEqual([]);
  });
});

describe('names (AC-136)', () => {
  it.each(['my skill', 'ünï', 'x'.repeat(65)])('frontmatter name %j fails with skill.invalid_name stating the rule', async (bad) => {
    const { dir, ctx, dataDir } = await setup();
    const zip = await writeZip(dir, 'bad.zip', buildZip([{ name: 'pkg/SKILL.md', data: `---\nname: "${bad}"\ndescription: d\n---\nBody\n` }]));
    const err = await refusal(install(ctx, { source: zip }));
    expect(err.code).toBe('skill.invalid_name');
    expect(err.message).toContain('letters, digits, "-" and "_"');
    expect(err.message).toContain('64 characters');
    expect(await listSkills(dataDir)).toEqual([]);
    // --name installs it under a valid name, the package untouched.
    const r = await install(ctx, { source: zip, name: 'renamed' });
    expect(r.skills[0]?.name).toBe('renamed');
    expect((await getSkill(dataDir, 'renamed')).warnings.join()).toContain('differs from the installed name');
  });

  it('without a frontmatter name: the top folder, sanitised; the zip stem for several top entries; uploaded-skill when empty', async () => {
    const { dir, ctx, dataDir } = await setup();
    const noName = '---\ndescription: d\n---\nBody\n';
    await install(ctx, { source: await writeZip(dir, 'a.zip', buildZip([{ name: '_My Tool (v2)!/SKILL.md', data: noName }])) });
    await install(ctx, {
      source: await writeZip(
        dir,
        'Zip Stem.zip',
        buildZip([
          { name: 'SKILL.md', data: noName },
          { name: 'notes.md', data: 'x' },
        ]),
      ),
    });
    await install(ctx, {
      source: await writeZip(
        dir,
        '___.zip',
        buildZip([
          { name: 'SKILL.md', data: noName },
          { name: 'x.md', data: 'x' },
        ]),
      ),
    });
    expect((await listSkills(dataDir)).map((s) => s.name)).toEqual(['My-Tool--v2', 'Zip-Stem', 'uploaded-skill']);
  });
});

describe('duplicates, replace and provenance (AC-137, AC-221)', () => {
  it('a second install fails with skill.exists; --replace keeps the digest when unchanged and records history when changed', async () => {
    const { dir, ctx, dataDir } = await setup();
    const first = await install(ctx, { source: fixture('hello-skill.zip') });
    const sha1 = first.skills[0]?.sha256;
    const dup = await refusal(install(ctx, { source: fixture('hello-skill.zip') }));
    expect(dup.code).toBe('skill.exists');
    expect(dup.hint).toContain('--replace');
    const same = await install(ctx, { source: fixture('hello-skill.zip'), replace: true });
    expect(same.skills[0]).toMatchObject({ replaced: true, sha256: sha1 });
    expect((await readLock(dataDir)).skills['hello-skill']?.history).toEqual([]);
    const changed = await writeZip(
      dir,
      'hello-skill.zip',
      buildZip([
        { name: 'hello-skill/SKILL.md', data: '---\nname: hello-skill\ndescription: Says hello louder\n---\n\nBody v2\n' },
        { name: 'hello-skill/run.sh', data: 'echo HELLO\n', mode: 0o100755 },
      ]),
    );
    const replaced = await install(ctx, { source: changed, replace: true });
    expect(replaced.skills[0]?.sha256).not.toBe(sha1);
    expect(replaced.skills[0]?.previous_sha256).toBe(sha1);
    const entry = (await readLock(dataDir)).skills['hello-skill'];
    expect(entry?.sha256).toBe(replaced.skills[0]?.sha256);
    expect(entry?.source).toBe(changed);
    expect(entry?.history).toEqual([expect.objectContaining({ sha256: sha1, source: fixture('hello-skill.zip') })]);
    expect((await getSkill(dataDir, 'hello-skill')).description).toBe('Says hello louder');
  });

  it('the digest covers contents and the executable bit but not timestamps or umask', async () => {
    const { dir, ctx } = await setup();
    const make = (mode: number) =>
      buildZip([
        { name: 'p/SKILL.md', data: skillMd('p') },
        { name: 'p/run.sh', data: 'echo\n', mode },
      ]);
    const a = (await install(ctx, { source: await writeZip(dir, 'a.zip', make(0o100755)) })).skills[0]?.sha256;
    const b = (await install(ctx, { source: await writeZip(dir, 'b.zip', make(0o100700)), replace: true })).skills[0]?.sha256;
    const c = (await install(ctx, { source: await writeZip(dir, 'c.zip', make(0o100644)), replace: true })).skills[0]?.sha256;
    expect(b).toBe(a);
    expect(c).not.toBe(a);
  });
});

describe('several packages in one source', () => {
  it('asks for --pick, installs the picked ones all-or-nothing', async () => {
    const { dir, ctx, dataDir } = await setup();
    const zip = await writeZip(
      dir,
      'multi.zip',
      buildZip([
        { name: 'repo/skills/a/SKILL.md', data: skillMd('a') },
        { name: 'repo/skills/b/SKILL.md', data: skillMd('b') },
      ]),
    );
    const many = await refusal(install(ctx, { source: zip }));
    expect(many.code).toBe('invalid_argument');
    expect(many.message).toContain('skills/a, skills/b');
    expect((await refusal(install(ctx, { source: zip, picks: ['skills/zzz'] }))).message).toContain('Available');
    await install(ctx, { source: zip, picks: ['skills/b'] });
    expect((await listSkills(dataDir)).map((s) => s.name)).toEqual(['b']);
    // b exists: installing a and b fails as a whole; a is not installed either.
    expect((await refusal(install(ctx, { source: zip, picks: ['skills/a', 'skills/b'] }))).code).toBe('skill.exists');
    expect((await listSkills(dataDir)).map((s) => s.name)).toEqual(['b']);
    await install(ctx, { source: zip, picks: ['skills/a', 'b'], replace: true });
    expect((await listSkills(dataDir)).map((s) => s.name)).toEqual(['a', 'b']);
    expect((await readLock(dataDir)).skills.a?.source_path).toBe('skills/a');
  });
});

describe('interrupted installs leave no half-installed skill and an unchanged lock', () => {
  it('an abort while the archive unpacks', async () => {
    const { dir, ctx, dataDir } = await setup();
    await install(ctx, { source: fixture('hello-skill.zip') });
    const lockBefore = await readFile(path.join(dataDir, 'skills.lock.json'));
    const before = await snapshot(skillsRoot(dataDir));
    const zip = await writeZip(
      dir,
      'big.zip',
      buildZip([{ name: 'big/SKILL.md', data: skillMd('big') }, ...Array.from({ length: 200 }, (_, i) => ({ name: `big/f${i}.txt`, data: `${i}` }))]),
    );
    const controller = new AbortController();
    const err = await refusal(install({ ...ctx, signal: controller.signal, onFile: ({ index }) => index === 100 && controller.abort() }, { source: zip }));
    expect(err.code).toBe('cancelled');
    expect(await snapshot(skillsRoot(dataDir))).toEqual(before);
    expect(await readFile(path.join(dataDir, 'skills.lock.json'))).toEqual(lockBefore);
    expect(existsSync(path.join(dataDir, '.skills-staging'))).toBe(false);
  });

  it('a failure after the move but before the lock write rolls the replace back', async () => {
    const { dir, ctx, dataDir } = await setup();
    await install(ctx, { source: fixture('hello-skill.zip') });
    const lockBefore = await readFile(path.join(dataDir, 'skills.lock.json'));
    const before = await snapshot(skillsRoot(dataDir));
    const v2 = await writeZip(
      dir,
      'v2.zip',
      buildZip([
        { name: 'hello-skill/SKILL.md', data: skillMd('hello-skill', 'v2') },
        { name: 'other/SKILL.md', data: skillMd('other') },
      ]),
    );
    const crash = (phase: string) => {
      if (phase === 'lock') throw new Error('simulated crash before the lock write');
    };
    await expect(install({ ...ctx, onPhase: crash }, { source: v2, picks: ['hello-skill', 'other'], replace: true })).rejects.toThrow('simulated crash');
    expect(await snapshot(skillsRoot(dataDir))).toEqual(before);
    expect(await readFile(path.join(dataDir, 'skills.lock.json'))).toEqual(lockBefore);
    expect((await verifySkills(dataDir)).ok).toBe(true);
  });

  it('debris of a killed install is never listed and is cleared by the next install', async () => {
    const { ctx, dataDir } = await setup();
    const debris = path.join(dataDir, '.skills-staging', 'dead', 'ready', 'half');
    await mkdir(debris, { recursive: true });
    await writeFile(path.join(debris, 'SKILL.md'), skillMd('half'));
    expect(await listSkills(dataDir)).toEqual([]);
    await install(ctx, { source: fixture('hello-skill.zip') });
    expect(existsSync(path.join(dataDir, '.skills-staging'))).toBe(false);
    expect((await listSkills(dataDir)).map((s) => s.name)).toEqual(['hello-skill']);
  });

  it('a second writer fails fast with store.locked while the mutex is held; a dead owner is taken over', async () => {
    const { ctx, dataDir } = await setup();
    await mkdir(path.join(dataDir, '.skills.lck'), { recursive: true });
    await writeFile(path.join(dataDir, '.skills.lck', 'owner.json'), JSON.stringify({ pid: process.ppid }));
    expect((await refusal(install(ctx, { source: fixture('hello-skill.zip') }))).code).toBe('store.locked');
    await writeFile(path.join(dataDir, '.skills.lck', 'owner.json'), JSON.stringify({ pid: 2 ** 22 + 12345 }));
    await install(ctx, { source: fixture('hello-skill.zip') });
    const release = await acquireSkillMutex(dataDir);
    expect((await refusal(removeSkill(dataDir, 'hello-skill'))).code).toBe('store.locked');
    await release();
  });
});

describe('directory sources', () => {
  it('installs a folder (or its SKILL.md), refuses symbolic links inside it', async () => {
    const { dir, ctx, dataDir } = await setup();
    const src = path.join(dir, 'src', 'tool');
    await mkdir(path.join(src, 'scripts'), { recursive: true });
    await writeFile(path.join(src, 'SKILL.md'), skillMd('tool'));
    await writeFile(path.join(src, 'scripts', 'go.sh'), '#!/bin/sh\n', { mode: 0o755 });
    await writeFile(path.join(src, 'skill.md'), skillMd('lowercase-loses'));
    await install(ctx, { source: path.join(src, 'SKILL.md') });
    expect((await getSkill(dataDir, 'tool')).entry_file).toBe('SKILL.md');
    expect((await stat(path.join(skillsRoot(dataDir), 'tool', 'scripts', 'go.sh'))).mode & 0o777).toBe(0o755);
    await symlink('/etc/passwd', path.join(src, 'passwd'));
    const err = await refusal(install(ctx, { source: src, replace: true }));
    expect(err.code).toBe('skill.unsafe_path');
    expect(err.message).toContain('passwd');
    expect(existsSync(path.join(skillsRoot(dataDir), 'tool', 'passwd'))).toBe(false);
  });
});

describe('verify, remove and --frozen', () => {
  it('verify reports modified, missing and untracked skills; remove drops folder and lock entry', async () => {
    const { ctx, dataDir } = await setup();
    await install(ctx, { source: fixture('hello-skill.zip') });
    expect(await verifySkills(dataDir)).toEqual({ ok: true, skills: [expect.objectContaining({ name: 'hello-skill', status: 'ok' })] });
    await writeFile(path.join(skillsRoot(dataDir), 'hello-skill', 'run.sh'), 'echo tampered\n');
    await mkdir(path.join(skillsRoot(dataDir), 'stray'));
    await writeFile(path.join(skillsRoot(dataDir), 'stray', 'SKILL.md'), skillMd('stray'));
    const report = await verifySkills(dataDir);
    expect(report.ok).toBe(false);
    expect(report.skills.map((s) => [s.name, s.status])).toEqual([
      ['hello-skill', 'modified'],
      ['stray', 'untracked'],
    ]);
    await rm(path.join(skillsRoot(dataDir), 'hello-skill'), { recursive: true });
    expect((await verifySkills(dataDir)).skills[0]?.status).toBe('missing');
    expect(await removeSkill(dataDir, 'hello-skill')).toEqual({ removed: 'hello-skill' });
    expect((await readLock(dataDir)).skills['hello-skill']).toBeUndefined();
    await removeSkill(dataDir, 'stray');
    expect(await listSkills(dataDir)).toEqual([]);
    expect((await refusal(removeSkill(dataDir, 'stray'))).code).toBe('skill.not_found');
    expect((await refusal(verifySkills(dataDir, ['ghost']))).code).toBe('skill.not_found');
  });

  it('--frozen restores modified or missing skills from their source and refuses a source that changed', async () => {
    const { dir, ctx, dataDir } = await setup();
    const src = path.join(dir, 'tool');
    await mkdir(src);
    await writeFile(path.join(src, 'SKILL.md'), skillMd('tool'));
    await install(ctx, { source: src });
    await install(ctx, { source: fixture('hello-skill.zip') });
    const lockBefore = await readFile(path.join(dataDir, 'skills.lock.json'));
    await writeFile(path.join(skillsRoot(dataDir), 'tool', 'SKILL.md'), 'tampered');
    await rm(path.join(skillsRoot(dataDir), 'hello-skill'), { recursive: true });
    const restored = await installFrozen({}, ctx);
    expect(restored.skills.map((s) => [s.name, s.status])).toEqual([
      ['hello-skill', 'installed'],
      ['tool', 'installed'],
    ]);
    expect((await verifySkills(dataDir)).ok).toBe(true);
    expect((await installFrozen({}, ctx)).skills.every((s) => s.status === 'unchanged')).toBe(true);
    // The source moves on: --frozen refuses it and changes nothing.
    await writeFile(path.join(src, 'SKILL.md'), skillMd('tool', 'new text'));
    await writeFile(path.join(skillsRoot(dataDir), 'tool', 'SKILL.md'), 'tampered again');
    const before = await snapshot(skillsRoot(dataDir));
    const drift = await refusal(installFrozen({}, ctx));
    expect(drift.code).toBe('skill.drift');
    expect(drift.message).toContain('tool');
    expect(await snapshot(skillsRoot(dataDir))).toEqual(before);
    expect((await refusal(installFrozen({ source: src }, ctx))).code).toBe('skill.drift');
    expect(await readFile(path.join(dataDir, 'skills.lock.json'))).toEqual(lockBefore);
    const unknown = path.join(dir, 'unknown');
    await cp(src, unknown, { recursive: true });
    await writeFile(path.join(unknown, 'SKILL.md'), skillMd('unknown'));
    expect((await refusal(installFrozen({ source: unknown }, ctx))).message).toContain('not recorded');
  });
});

async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await execa('git', ['-c', 'user.name=lbot-test', '-c', 'user.email=test@lbot.invalid', '-c', 'init.defaultBranch=main', ...args], { cwd });
  return r.stdout.trim();
}

const hasGit = (await execa('git', ['--version'], { reject: false })).exitCode === 0;
if (!hasGit) console.warn('skipping git source tests: the git executable is not available');

describe.skipIf(!hasGit)(withReason('git sources (local paths and file:// work offline)', !hasGit && 'the git executable is not available'), () => {
  it('installs from a repository path and a file:// URL at a ref, records the commit, and --frozen pins it', async () => {
    const { dir, dataDir, ctx } = await setup(createSkillFetcher());
    const repo = path.join(dir, 'repo');
    await mkdir(path.join(repo, 'skills', 'greeter'), { recursive: true });
    await writeFile(path.join(repo, 'skills', 'greeter', 'SKILL.md'), skillMd('greeter', 'Greets'));
    await symlink('../README', path.join(repo, 'elsewhere-link'));
    await git(repo, 'init', '-q');
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '-m', 'v1');
    await git(repo, 'tag', 'v1');
    const v1 = await git(repo, 'rev-parse', 'HEAD');
    const bare = path.join(dir, 'skills.git');
    await git(dir, 'clone', '-q', '--bare', repo, bare);
    const r = await install(ctx, { source: bare });
    expect(r.skills[0]).toMatchObject({ name: 'greeter', description: 'Greets' });
    expect((await readLock(dataDir)).skills.greeter).toMatchObject({ source: bare, source_type: 'git', commit: v1, source_path: 'skills/greeter' });
    expect(existsSync(path.join(skillsRoot(dataDir), 'greeter', '.git'))).toBe(false);
    // A new commit upstream; installing the tag by file:// URL still gets v1.
    await writeFile(path.join(repo, 'skills', 'greeter', 'SKILL.md'), skillMd('greeter', 'Greets v2'));
    await git(repo, 'commit', '-q', '-am', 'v2');
    await git(repo, 'push', '-q', bare, 'main');
    const tagged = await install(ctx, { source: `file://${bare}`, ref: 'v1', name: 'greeter-v1' });
    expect(tagged.skills[0]?.description).toBe('Greets');
    // --frozen restores the recorded commit, not the moved branch.
    await rm(path.join(skillsRoot(dataDir), 'greeter'), { recursive: true });
    await installFrozen({}, ctx);
    expect((await getSkill(dataDir, 'greeter')).description).toBe('Greets');
    expect((await verifySkills(dataDir)).ok).toBe(true);
  });

  it('an unreachable or missing remote fails fast with skill.invalid_source', async () => {
    const { ctx, dataDir } = await setup(createSkillFetcher());
    const missing = await refusal(install(ctx, { source: 'file:///nonexistent/lbot/skills.git' }));
    expect(missing.code).toBe('skill.invalid_source');
    const refused = await refusal(install(ctx, { source: 'git+https://127.0.0.1:9/o/r.git' }));
    expect(refused.code).toBe('skill.invalid_source');
    expect(refused.message).toContain('127.0.0.1');
    expect(await listSkills(dataDir)).toEqual([]);
  });
});
