// The installed skills: `<data-dir>/skills/<name>/` joined with skills.lock.json (list, show, cat, remove).
import { mkdir, readdir, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { LbotError } from '../errors.js';
import { acquireSkillMutex, readLock, writeLock, type LockEntry } from './lock.js';
import { isValidSkillName } from './names.js';
import { findEntryFile, readSkillPackage, type EntryFileName } from './package.js';
import { checkPackageRelPath } from './file-path.js';
import { walkTree } from './tree.js';

export const SKILLS_DIR = 'skills';
export const STAGING_DIR = '.skills-staging';

/** `<data-dir>/skills`. */
export const skillsRoot = (dataDir: string): string => path.join(dataDir, SKILLS_DIR);
/** Scratch space for installs, on the same file system as the skills root so the final move is a rename. */
export const stagingRoot = (dataDir: string): string => path.join(dataDir, STAGING_DIR);

export type SkillProvenance = Pick<LockEntry, 'source' | 'source_type' | 'source_path' | 'ref' | 'commit' | 'sha256' | 'installed_at' | 'history'>;

/** One installed skill as lbot reports it (skills-mcp-tools.md §1.5, plus lock provenance). */
export type InstalledSkill = {
  name: string;
  display_name: string;
  description: string;
  version: string | null;
  instructions: string;
  /** Absolute, symlink-resolved host path of the package. */
  package_root: string;
  entry_file: EntryFileName | null;
  frontmatter: Record<string, unknown>;
  created_at: string | null;
  updated_at: string | null;
  warnings: string[];
  /** True when the folder has no entry file or a name lbot cannot use; such skills are never offered to runners. */
  invalid: boolean;
  /** Lock data; null for a folder the lock does not know (see `lbot skill verify`). */
  provenance: SkillProvenance | null;
};

function notFound(name: string, dataDir: string): LbotError {
  return new LbotError('skill.not_found', `skill ${JSON.stringify(name)} is not installed in ${skillsRoot(dataDir)}`, {
    details: { name },
    hint: 'run `lbot skill list` to see installed skills',
  });
}

function provenanceOf(entry: LockEntry | undefined): SkillProvenance | null {
  if (!entry) return null;
  const { source, source_type, source_path, ref, commit, sha256, installed_at, history } = entry;
  return { source, source_type, source_path, ref, commit, sha256, installed_at, history };
}

async function loadInstalled(dir: string, name: string, lockEntry: LockEntry | undefined): Promise<InstalledSkill> {
  const root = await realpath(dir);
  const base: InstalledSkill = {
    name,
    display_name: name,
    description: '',
    version: lockEntry?.version ?? null,
    instructions: '',
    package_root: root,
    entry_file: null,
    frontmatter: {},
    created_at: null,
    updated_at: null,
    warnings: [],
    invalid: false,
    provenance: provenanceOf(lockEntry),
  };
  if (!isValidSkillName(name)) return { ...base, invalid: true, warnings: [`folder name ${JSON.stringify(name)} is not a valid skill name`] };
  if (!(await findEntryFile(root))) return { ...base, invalid: true, warnings: ['the folder has no SKILL.md'] };
  const pkg = await readSkillPackage(root);
  const st = await stat(path.join(root, pkg.entry_file));
  const warnings = [...pkg.warnings];
  if (pkg.declared_name !== null && pkg.declared_name !== name)
    warnings.push(`frontmatter name "${pkg.declared_name}" differs from the installed name "${name}"`);
  return {
    ...base,
    display_name: pkg.display_name || name,
    description: pkg.description,
    version: pkg.version ?? lockEntry?.version ?? null,
    instructions: pkg.instructions,
    entry_file: pkg.entry_file,
    frontmatter: pkg.frontmatter,
    created_at: st.ctime.toISOString(),
    updated_at: st.mtime.toISOString(),
    warnings,
  };
}

/** Names of the folders directly under the skills root (hidden ones excluded), sorted. */
export async function installedNames(dataDir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(skillsRoot(dataDir), { withFileTypes: true });
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return [];
    throw err;
  }
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
}

/** Every installed skill, sorted by name. */
export async function listSkills(dataDir: string): Promise<InstalledSkill[]> {
  const lock = await readLock(dataDir);
  const out: InstalledSkill[] = [];
  for (const name of await installedNames(dataDir)) {
    out.push(await loadInstalled(path.join(skillsRoot(dataDir), name), name, lock.skills[name]));
  }
  return out;
}

/** One installed skill; `skill.not_found` when there is no such folder. */
export async function getSkill(dataDir: string, name: string): Promise<InstalledSkill> {
  if (!isValidSkillName(name)) throw notFound(name, dataDir);
  const dir = path.join(skillsRoot(dataDir), name);
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) throw notFound(name, dataDir);
  const lock = await readLock(dataDir);
  return loadInstalled(dir, name, lock.skills[name]);
}

export type SkillFileEntry = { path: string; name: string; is_dir: boolean; size: number | null };

/** Files and folders of an installed skill, sorted by path. */
export async function listSkillFiles(dataDir: string, name: string, includeHidden = false): Promise<SkillFileEntry[]> {
  const skill = await getSkill(dataDir, name);
  const entries = await walkTree(skill.package_root, (_rel, base) => !includeHidden && base.startsWith('.'));
  return entries.map((e) => ({ path: e.rel, name: path.posix.basename(e.rel), is_dir: e.kind === 'dir', size: e.kind === 'dir' ? null : e.size }));
}

/**
 * Reads one file of an installed skill. The path is checked (URL-decoded, no `..`, no absolute or
 * drive paths) and must resolve inside the package (acceptance AC-138).
 */
export async function readSkillFile(dataDir: string, name: string, rawPath: string): Promise<{ skill: { name: string }; path: string; content: string }> {
  const rel = checkPackageRelPath(rawPath);
  const skill = await getSkill(dataDir, name);
  const target = path.join(skill.package_root, ...rel.split('/'));
  let real: string;
  try {
    real = await realpath(target);
  } catch {
    throw new LbotError('skill.not_found', `skill ${name} has no file ${rel}`, { details: { name, path: rel } });
  }
  if (!real.startsWith(skill.package_root + path.sep)) {
    throw new LbotError('skill.unsafe_path', `${rawPath} resolves outside the skill package ${name}`, { details: { name, path: rawPath } });
  }
  const st = await stat(real);
  if (!st.isFile()) throw new LbotError('skill.not_found', `${rel} in skill ${name} is not a file`, { details: { name, path: rel } });
  const bytes = await readFile(real);
  let content: string;
  try {
    content = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new LbotError('invalid_argument', `${rel} in skill ${name} is not UTF-8 text`, { details: { name, path: rel }, hint: `read it from ${real}` });
  }
  return { skill: { name }, path: rel, content };
}

/** Removes an installed skill and its lock entry (the folder first leaves the skills root in one rename). */
export async function removeSkill(dataDir: string, name: string): Promise<{ removed: string }> {
  const release = await acquireSkillMutex(dataDir);
  try {
    const lock = await readLock(dataDir);
    const dir = path.join(skillsRoot(dataDir), name);
    const present = isValidSkillName(name) && (await stat(dir).catch(() => null))?.isDirectory() === true;
    if (!present && !lock.skills[name]) throw notFound(name, dataDir);
    let trash: string | null = null;
    if (present) {
      trash = path.join(stagingRoot(dataDir), `removed-${name}-${process.pid}-${Date.now()}`);
      await rm(stagingRoot(dataDir), { recursive: true, force: true });
      await mkdir(stagingRoot(dataDir), { recursive: true });
      await rename(dir, trash);
    }
    const skills = { ...lock.skills };
    delete skills[name];
    try {
      await writeLock(dataDir, { ...lock, skills });
    } catch (err) {
      if (trash) await rename(trash, dir);
      throw err;
    }
    if (trash) await rm(trash, { recursive: true, force: true });
    return { removed: name };
  } finally {
    await release();
  }
}
