// Every real Agent Skills package in fixtures/skills/real installs from its folder and from a zip built
// here, validates, lists with its description, keeps its frontmatter, and round-trips verify.
import { readdirSync, statSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { isRecord } from '../../src/core/json.js';
import type { SkillFetcher } from '../../src/core/skills/fetcher.js';
import { installFrozen } from '../../src/core/skills/frozen.js';
import { installSkills, type InstallContext } from '../../src/core/skills/install.js';
import { DEFAULT_SKILL_LIMITS } from '../../src/core/skills/limits.js';
import { getSkill, listSkills } from '../../src/core/skills/store.js';
import { validateSkills } from '../../src/core/skills/validate.js';
import { verifySkills } from '../../src/core/skills/verify.js';
import { buildZip, tempDir, writeZip, type ZipEntry } from './skill-zip.js';

const REAL = path.resolve(import.meta.dirname, '../../fixtures/skills/real');
const PACKAGES = readdirSync(REAL)
  .filter((n) => statSync(path.join(REAL, n)).isDirectory())
  .sort();

const offline: SkillFetcher = {
  gitClone: () => Promise.reject(new Error('network used')),
  download: () => Promise.reject(new Error('network used')),
};

async function context(): Promise<InstallContext> {
  const dir = await tempDir();
  return { dataDir: path.join(dir, 'data'), limits: DEFAULT_SKILL_LIMITS, fetcher: offline, cwd: dir };
}

/** The frontmatter as an independent YAML parse sees it. */
async function frontmatterOf(dir: string): Promise<Record<string, unknown>> {
  const text = await readFile(path.join(dir, 'SKILL.md'), 'utf8');
  const block = /^---\n([\s\S]*?)\n---\n/.exec(text)?.[1] ?? '';
  const value: unknown = parseYaml(block);
  if (!isRecord(value)) throw new Error(`no frontmatter in ${dir}`);
  return value;
}

/** Zip entries for a folder, top folder = its name, file modes as on disk. */
async function zipEntries(dir: string, top: string): Promise<ZipEntry[]> {
  const out: ZipEntry[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const name of (await readdir(path.join(dir, rel))).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = await stat(path.join(dir, r));
      if (st.isDirectory()) await walk(r);
      else out.push({ name: `${top}/${r}`, data: await readFile(path.join(dir, r)), mode: 0o100000 | (st.mode & 0o777) });
    }
  };
  await walk('');
  return out;
}

describe('real Agent Skills packages', () => {
  it('has the packages the fixtures note lists', () => {
    expect(PACKAGES).toEqual([
      'algorithmic-art',
      'brand-guidelines',
      'internal-comms',
      'lark-event',
      'lark-skill-maker',
      'mcp-builder',
      'slack-gif-creator',
      'webapp-testing',
    ]);
  });

  it.each(PACKAGES)('%s installs from its folder and from a zip with the same digest, validates and verifies', async (name) => {
    const dir = path.join(REAL, name);
    const fm = await frontmatterOf(dir);
    const fromDir = await context();
    const a = await installSkills({ source: dir }, fromDir);
    expect(a.skills.map((s) => s.name)).toEqual([name]);
    const listed = await listSkills(fromDir.dataDir);
    expect(listed.map((s) => [s.name, s.description])).toEqual([[name, String(fm.description).trim()]]);
    const shown = await getSkill(fromDir.dataDir, name);
    expect(shown.frontmatter).toEqual(fm);
    expect(shown.invalid).toBe(false);
    expect(shown.instructions.length).toBeGreaterThan(100);

    const zipCtx = await context();
    const zip = await writeZip(path.dirname(zipCtx.dataDir), `${name}.zip`, buildZip(await zipEntries(dir, name)));
    const b = await installSkills({ source: zip }, zipCtx);
    expect(b.skills[0]?.sha256).toBe(a.skills[0]?.sha256);
    expect((await listSkills(zipCtx.dataDir))[0]?.description).toBe(String(fm.description).trim());

    for (const ctx of [fromDir, zipCtx]) {
      const report = await validateSkills(name, ctx);
      expect(report.ok, JSON.stringify(report.skills[0]?.errors)).toBe(true);
      expect(await verifySkills(ctx.dataDir)).toEqual({ ok: true, skills: [expect.objectContaining({ name, status: 'ok' })] });
    }
    expect((await validateSkills(dir, fromDir)).ok).toBe(true);
  });

  it('keeps the larksuite frontmatter: version, nested metadata and a non-ASCII description', async () => {
    const ctx = await context();
    await installSkills({ source: path.join(REAL, 'lark-event') }, ctx);
    const s = await getSkill(ctx.dataDir, 'lark-event');
    expect(s.version).toBe('1.0.0');
    expect(s.frontmatter.metadata).toEqual({ requires: { bins: ['lark-cli'] }, cliHelp: 'lark-cli event --help' });
    expect(s.description).toMatch(/^飞书事件订阅/);
  });

  it('installs all of them into one data dir; verify and --frozen round-trip', async () => {
    const ctx = await context();
    for (const name of PACKAGES) await installSkills({ source: path.join(REAL, name) }, ctx);
    const listed = await listSkills(ctx.dataDir);
    expect(listed.map((s) => s.name)).toEqual(PACKAGES);
    expect(listed.every((s) => s.description.length > 0)).toBe(true);
    expect((await verifySkills(ctx.dataDir)).ok).toBe(true);
    expect((await installFrozen({}, ctx)).skills.map((s) => s.status)).toEqual(PACKAGES.map(() => 'unchanged'));
  });

  it('picks one package out of a source folder that holds them all', async () => {
    const ctx = await context();
    const r = await installSkills({ source: REAL, picks: ['webapp-testing'] }, ctx);
    expect(r.skills.map((s) => s.name)).toEqual(['webapp-testing']);
    expect(await readdir(path.join(ctx.dataDir, 'skills'))).toEqual(['webapp-testing']);
  });
});
