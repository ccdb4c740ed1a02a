// Layout checks for a package: hard errors that stop an install, and Agent Skills format warnings.
import { access } from 'node:fs/promises';
import path from 'node:path';
import type { ErrorCode } from '../errors.js';
import { isRecord } from '../json.js';
import { agentSkillsNameWarnings, isValidSkillName, SKILL_NAME_RULE } from './names.js';
import type { SkillPackage } from './package.js';
import { walkTree } from './tree.js';

export type LayoutIssue = { code: ErrorCode; message: string };
export type LayoutReport = { errors: LayoutIssue[]; warnings: string[] };

const MAX_DESCRIPTION = 1024;
const MAX_COMPATIBILITY = 500;
const MAX_BODY_LINES = 500;

/** Relative Markdown link targets in the instructions (`[x](references/a.md)`), without anchors. */
function relativeLinks(body: string): string[] {
  const out = new Set<string>();
  for (const m of body.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = (m[1] ?? '').split('#')[0] ?? '';
    if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('/')) continue;
    out.add(target);
  }
  return [...out];
}

async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch {
    return false;
  }
}

function frontmatterWarnings(pkg: SkillPackage, dirName: string): string[] {
  const fm = pkg.frontmatter;
  const out: string[] = [];
  if (pkg.has_frontmatter && pkg.declared_name === null) out.push('frontmatter has no "name" (Agent Skills format requires it)');
  if (pkg.declared_name !== null) {
    out.push(...agentSkillsNameWarnings(pkg.declared_name));
    if (pkg.declared_name !== dirName) out.push(`name "${pkg.declared_name}" differs from its folder name "${dirName}"`);
  }
  if (pkg.description === '') out.push('frontmatter has no "description": models see only the name before activation');
  else if (pkg.description.length > MAX_DESCRIPTION)
    out.push(`description is ${pkg.description.length} characters (Agent Skills format allows ${MAX_DESCRIPTION})`);
  const compat = fm.compatibility;
  if (compat !== undefined && (typeof compat !== 'string' || compat.length > MAX_COMPATIBILITY)) {
    out.push(`"compatibility" should be a string of at most ${MAX_COMPATIBILITY} characters`);
  }
  const meta = fm.metadata;
  if (meta !== undefined && (!isRecord(meta) || Object.values(meta).some((v) => typeof v !== 'string'))) {
    out.push('"metadata" is not a map of strings to strings (kept as is; some clients may ignore it)');
  }
  const tools = fm['allowed-tools'];
  if (tools !== undefined && typeof tools !== 'string' && !Array.isArray(tools)) out.push('"allowed-tools" should be a space-separated string');
  return out;
}

/**
 * Checks a package for install. `dirName` is the folder name the package came in. Errors carry the
 * code the install would fail with.
 */
export async function checkPackageLayout(pkg: SkillPackage, dirName = path.basename(pkg.dir)): Promise<LayoutReport> {
  const errors: LayoutIssue[] = [];
  const warnings = [...pkg.warnings];
  if (pkg.declared_name !== null && !isValidSkillName(pkg.declared_name)) {
    errors.push({ code: 'skill.invalid_name', message: `frontmatter name ${JSON.stringify(pkg.declared_name)} is not allowed; ${SKILL_NAME_RULE}` });
  }
  if (pkg.entry_file === 'skill.md') warnings.push('entry file is "skill.md"; the Agent Skills format names it "SKILL.md"');
  warnings.push(...frontmatterWarnings(pkg, dirName));
  const lines = pkg.instructions.split('\n').length;
  if (lines > MAX_BODY_LINES) warnings.push(`instructions are ${lines} lines; keep SKILL.md under ${MAX_BODY_LINES} lines and move detail to referenced files`);
  for (const entry of await walkTree(pkg.dir, (_rel, name) => name === '.git')) {
    if (entry.kind === 'symlink' || entry.kind === 'other') {
      errors.push({
        code: 'skill.unsafe_path',
        message: `${entry.rel} is a ${entry.kind === 'symlink' ? 'symbolic link' : 'special file'}; skill packages may hold only regular files and folders`,
      });
    }
  }
  for (const link of relativeLinks(pkg.instructions)) {
    const target = path.resolve(pkg.dir, decodeURIComponentSafe(link));
    if (!target.startsWith(pkg.dir + path.sep)) warnings.push(`instructions link to ${link}, which is outside the package`);
    else if (!(await exists(target))) warnings.push(`instructions link to ${link}, which does not exist in the package`);
  }
  return { errors, warnings };
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
