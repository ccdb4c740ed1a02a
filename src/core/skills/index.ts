// The skill index: which installed skills a binding sees, and how they are listed to runners and models.
import type { Binding } from '../protocol/binding.js';
import { listSkills, type InstalledSkill } from './store.js';

/** What the tool manager needs of a skill at run time. */
export type SkillCatalogEntry = Pick<InstalledSkill, 'name' | 'display_name' | 'description' | 'instructions' | 'package_root'>;

export type BoundSkills = {
  /** Installed, valid skills the binding names, sorted by name. */
  visible: SkillCatalogEntry[];
  /** Names the binding lists that are not installed (or not usable); worth a warning in the run trace. */
  missing: string[];
};

/** Loads the usable installed skills of a data dir (invalid folders left out), sorted by name. */
export async function loadSkillCatalog(dataDir: string): Promise<SkillCatalogEntry[]> {
  return (await listSkills(dataDir))
    .filter((s) => !s.invalid)
    .map(({ name, display_name, description, instructions, package_root }) => ({ name, display_name, description, instructions, package_root }));
}

/**
 * The skills bound to a binding: exactly the names in `binding.skills` (an empty list binds none),
 * looked up in the catalog. Skills not bound are invisible to the run: not listed, not mounted, not
 * activatable (skills-mcp-tools.md §1.11, §9 Q2).
 */
export function boundSkills(binding: Pick<Binding, 'skills'>, catalog: readonly SkillCatalogEntry[]): BoundSkills {
  const byName = new Map(catalog.map((s) => [s.name, s]));
  const visible: SkillCatalogEntry[] = [];
  const missing: string[] = [];
  for (const name of [...new Set(binding.skills)].sort()) {
    const hit = byName.get(name);
    if (hit) visible.push(hit);
    else missing.push(name);
  }
  return { visible, missing };
}

/** `resources.skills` for the run context: `[{skill_name, description}]`, sorted by name. */
export function skillResources(visible: readonly SkillCatalogEntry[]): Array<{ skill_name: string; description: string }> {
  return [...visible].sort((a, b) => a.name.localeCompare(b.name)).map((s) => ({ skill_name: s.name, description: s.description }));
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The `<available_skills>` block (Agent Skills convention); the description element is omitted when empty. */
export function renderAvailableSkills(visible: readonly SkillCatalogEntry[]): string {
  const items = [...visible]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((s) => {
      const desc = s.description.trim() === '' ? '' : `<description>${escapeXml(s.description.replace(/\s+/g, ' ').trim())}</description>`;
      return `<skill><name>${escapeXml(s.name)}</name>${desc}</skill>`;
    });
  return `<available_skills>\n${items.join('\n')}\n</available_skills>`;
}

/**
 * The system-prompt index of skills-mcp-tools.md §1.12: one line per skill and the nudge to call
 * `activate`. Empty string when no skill is visible (the prompt is then left alone).
 */
export function renderSkillIndexPrompt(visible: readonly SkillCatalogEntry[]): string {
  if (visible.length === 0) return '';
  const lines = [...visible]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((s) => `- ${s.name} (${s.display_name || s.name}): ${s.description.replace(/\s*\n\s*/g, ' ').trim()}`);
  return [
    '\n\nAvailable Skills:',
    ...lines,
    '',
    'If the request clearly matches a skill by its description, call the `activate` tool with that skill name to load its full instructions; ' +
      'only names and descriptions are shown here and the instructions arrive as the tool result. If nothing clearly matches, answer normally.',
  ].join('\n');
}
