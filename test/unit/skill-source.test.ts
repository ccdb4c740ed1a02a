// Source classification and remote validation before any network request (acceptance AC-142, spec §1.8, §8 #37).
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LbotError } from '../../src/core/errors.js';
import { resolveSkillSource } from '../../src/core/skills/source.js';

async function refused(src: string, opts = {}): Promise<LbotError> {
  try {
    await resolveSkillSource(src, opts);
  } catch (err) {
    if (err instanceof LbotError) return err;
    throw err;
  }
  throw new Error(`expected ${src} to be refused`);
}

describe('remote sources (AC-142)', () => {
  it('refuses plain http, foreign https hosts and owner/repo mismatches with skill.invalid_source', async () => {
    const http = await refused('http://github.com/o/r/blob/main/x/SKILL.md');
    expect(http.code).toBe('skill.invalid_source');
    expect(http.message).toContain('plain http');
    const evil = await refused('https://evil.example/x.zip');
    expect(evil.code).toBe('skill.invalid_source');
    expect(evil.message).toContain('evil.example');
    const owner = await refused('https://github.com/o/r/blob/main/x/SKILL.md', { owner: 'other' });
    expect(owner.code).toBe('skill.invalid_source');
    expect(owner.message).toContain('--owner');
    const repo = await refused('https://github.com/o/r/tree/main/x', { repo: 'other' });
    expect(repo.message).toContain('--repo');
    expect((await refused('https://raw.githubusercontent.com/o/r/main/x/SKILL.md', { owner: 'z' })).code).toBe('skill.invalid_source');
  });

  it('refuses credentials in URLs, unknown schemes and GitHub URLs that are neither repo, folder, SKILL.md nor zip', async () => {
    expect((await refused('https://user:tok@github.com/o/r')).message).toContain('credentials');
    expect((await refused('ftp://example.com/x.zip')).code).toBe('skill.invalid_source');
    expect((await refused('https://github.com/o/r/blob/main/README.md')).message).toContain('SKILL.md');
    expect((await refused('https://github.com/o/r/issues/1')).code).toBe('skill.invalid_source');
    expect((await refused('https://github.com/o/r/tree/main/a%2f..%2f..%2fx')).code).toBe('skill.invalid_source');
  });

  it('maps a GitHub SKILL.md URL to a clone of the ref and the file folder (§8 #37)', async () => {
    expect(await resolveSkillSource('https://github.com/o/r/blob/main/skills/pdf/SKILL.md')).toEqual({
      type: 'git',
      location: 'https://github.com/o/r.git',
      ref: 'main',
      subdir: 'skills/pdf',
    });
    expect(await resolveSkillSource('https://raw.githubusercontent.com/o/r/v1/pdf/SKILL.md', { owner: 'o', repo: 'r' })).toMatchObject({
      ref: 'v1',
      subdir: 'pdf',
    });
    expect(await resolveSkillSource('https://github.com/o/r/tree/dev/skills')).toMatchObject({ type: 'git', ref: 'dev', subdir: 'skills' });
    expect(await resolveSkillSource('https://github.com/o/r')).toMatchObject({ type: 'git', location: 'https://github.com/o/r.git', ref: null });
    expect(await resolveSkillSource('https://github.com/o/r/releases/download/v1/pdf.zip')).toMatchObject({ type: 'url', filename: 'pdf.zip' });
    expect(await resolveSkillSource('https://codeload.github.com/o/r/zip/main')).toMatchObject({ type: 'url' });
  });

  it('accepts explicit git remotes and keeps a #ref', async () => {
    expect(await resolveSkillSource('git+https://gitlab.example/o/r#v2')).toEqual({
      type: 'git',
      location: 'https://gitlab.example/o/r',
      ref: 'v2',
      subdir: '',
    });
    expect(await resolveSkillSource('https://gitlab.example/o/r.git')).toMatchObject({ type: 'git', ref: null });
    expect(await resolveSkillSource('file:///srv/skills.git')).toMatchObject({ type: 'git', location: 'file:///srv/skills.git' });
    expect(await resolveSkillSource('git@github.com:o/r.git')).toMatchObject({ type: 'git', location: 'git@github.com:o/r.git' });
    expect(await resolveSkillSource('file:///srv/skills.git', { ref: 'abc1234' })).toMatchObject({ ref: 'abc1234' });
  });
});

describe('local sources', () => {
  it('classifies folders, zips, SKILL.md files and bare repositories', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'lbot-skill-src-'));
    await mkdir(path.join(root, 'pkg'));
    await writeFile(path.join(root, 'pkg', 'SKILL.md'), '---\nname: pkg\n---\n');
    await writeFile(path.join(root, 'a.zip'), 'PK');
    await mkdir(path.join(root, 'bare.git', 'objects'), { recursive: true });
    await mkdir(path.join(root, 'bare.git', 'refs'));
    await writeFile(path.join(root, 'bare.git', 'HEAD'), 'ref: refs/heads/main\n');
    expect(await resolveSkillSource('pkg', {}, root)).toEqual({ type: 'directory', location: path.join(root, 'pkg') });
    expect(await resolveSkillSource(path.join(root, 'pkg', 'SKILL.md'))).toEqual({ type: 'directory', location: path.join(root, 'pkg') });
    expect(await resolveSkillSource('a.zip', {}, root)).toEqual({ type: 'zip', location: path.join(root, 'a.zip') });
    expect(await resolveSkillSource('bare.git', {}, root)).toMatchObject({ type: 'git', location: path.join(root, 'bare.git') });
    expect((await refused(path.join(root, 'missing'))).message).toContain('no such file');
    expect((await refused(path.join(root, 'pkg'), { owner: 'o' })).message).toContain('GitHub');
  });
});
