// Reading one skill package from a directory, and finding packages inside an unpacked source.
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { LbotError } from '../errors.js';
import { isRecord } from '../json.js';
import { frontmatterString, parseSkillMd } from './frontmatter.js';

export type EntryFileName = 'SKILL.md' | 'skill.md';

export type SkillPackage = {
  /** Absolute directory of the package. */
  dir: string;
  entry_file: EntryFileName;
  /** Every frontmatter key, unknown ones included. */
  frontmatter: Record<string, unknown>;
  /** `name` from the frontmatter, trimmed; null when absent or empty. */
  declared_name: string | null;
  display_name: string;
  description: string;
  /** `version`, else `metadata.version`; null when neither is set. */
  version: string | null;
  instructions: string;
  has_frontmatter: boolean;
  warnings: string[];
};

/** Which entry file a directory has: `SKILL.md` wins over `skill.md`; null when neither is a regular file. */
export async function findEntryFile(dir: string): Promise<EntryFileName | null> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return null;
  }
  for (const candidate of ['SKILL.md', 'skill.md'] as const) {
    if (!names.includes(candidate)) continue;
    const st = await lstat(path.join(dir, candidate));
    if (st.isFile()) return candidate;
  }
  return null;
}

function versionOf(frontmatter: Record<string, unknown>): string | null {
  const direct = frontmatterString(frontmatter, 'version');
  if (direct !== '') return direct;
  const meta = frontmatter.metadata;
  if (isRecord(meta)) {
    const v = frontmatterString(meta, 'version');
    if (v !== '') return v;
  }
  return null;
}

/** Reads and parses the package in `dir`; throws `skill.missing_manifest` without an entry file. */
export async function readSkillPackage(dir: string): Promise<SkillPackage> {
  const entry = await findEntryFile(dir);
  if (!entry) {
    throw new LbotError('skill.missing_manifest', `No SKILL.md found in ${dir}`, {
      details: { dir },
      hint: 'a skill package is a folder with a SKILL.md file (YAML frontmatter with name and description, then Markdown instructions)',
    });
  }
  const bytes = await readFile(path.join(dir, entry));
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new LbotError('skill.missing_manifest', `${entry} in ${dir} is not valid UTF-8 text`, { details: { dir, entry } });
  }
  const parsed = parseSkillMd(text);
  const fm = parsed.frontmatter;
  const declared = frontmatterString(fm, 'name');
  const warnings = [...parsed.warnings];
  if (!parsed.hasFrontmatter) warnings.push(`${entry} has no YAML frontmatter (expected name and description between "---" lines)`);
  return {
    dir,
    entry_file: entry,
    frontmatter: fm,
    declared_name: declared === '' ? null : declared,
    display_name: frontmatterString(fm, 'display_name'),
    description: frontmatterString(fm, 'description'),
    version: versionOf(fm),
    instructions: parsed.body,
    has_frontmatter: parsed.hasFrontmatter,
    warnings,
  };
}

/**
 * Finds packages under `root`, breadth first to `maxDepth` (skills-mcp-tools.md §1.6): a directory with
 * an entry file is a package and is not descended. Hidden folders are skipped. Returns '/'-separated
 * paths relative to `root` ('' = root itself), sorted.
 */
export async function discoverPackages(root: string, maxDepth = 2): Promise<string[]> {
  const found: string[] = [];
  let level: string[] = [''];
  for (let depth = 0; depth <= maxDepth && level.length > 0; depth++) {
    const next: string[] = [];
    for (const rel of level) {
      const dir = path.join(root, ...rel.split('/').filter(Boolean));
      if (await findEntryFile(dir)) {
        found.push(rel);
        continue;
      }
      if (depth === maxDepth) continue;
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of entries) {
        if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') next.push(rel === '' ? e.name : `${rel}/${e.name}`);
      }
    }
    level = next.sort();
  }
  return found.sort();
}
