// Skill name rules (skills-mcp-tools.md §1.3, acceptance AC-136) and name derivation for installs.
import { LbotError } from '../errors.js';

export const MAX_SKILL_NAME_LENGTH = 64;
export const FALLBACK_SKILL_NAME = 'uploaded-skill';
const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** The rule, as users read it in errors. */
export const SKILL_NAME_RULE = 'a skill name may contain only ASCII letters, digits, "-" and "_", and at most 64 characters';

/** True when `name` is a valid lbot skill name. */
export function isValidSkillName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

/** Returns the trimmed name or throws `skill.invalid_name` stating the rule. */
export function validateSkillName(raw: string, origin = 'skill name'): string {
  const name = raw.trim();
  if (name === '') {
    throw new LbotError('skill.invalid_name', `${origin} is empty; ${SKILL_NAME_RULE}`, { details: { name: raw } });
  }
  if (name.length > MAX_SKILL_NAME_LENGTH) {
    throw new LbotError('skill.invalid_name', `${origin} ${JSON.stringify(name)} is ${name.length} characters long; ${SKILL_NAME_RULE}`, {
      details: { name },
    });
  }
  if (!NAME_PATTERN.test(name)) {
    throw new LbotError('skill.invalid_name', `${origin} ${JSON.stringify(name)} is not allowed; ${SKILL_NAME_RULE}`, {
      details: { name },
      hint: 'rename the skill in its SKILL.md frontmatter, or install it under another name with --name',
    });
  }
  return name;
}

/**
 * Turns a directory or file stem into a skill name: characters outside [A-Za-z0-9_-] become "-",
 * leading and trailing "-"/"_" are trimmed, the result is cut to 64 characters; empty → `uploaded-skill`.
 */
export function sanitizeSkillName(raw: string): string {
  const trim = (s: string) => s.replace(/^[-_]+/, '').replace(/[-_]+$/, '');
  const cut = trim(trim(raw.replace(/[^A-Za-z0-9_-]/g, '-')).slice(0, MAX_SKILL_NAME_LENGTH));
  return cut === '' ? FALLBACK_SKILL_NAME : cut;
}

/** Deviations from the public Agent Skills name rule (lowercase, digits, single hyphens), as warnings. */
export function agentSkillsNameWarnings(name: string): string[] {
  const out: string[] = [];
  if (!/^[a-z0-9-]+$/.test(name)) out.push(`name "${name}" is not lowercase letters, digits and "-" (Agent Skills format)`);
  if (/^-|-$/.test(name)) out.push(`name "${name}" starts or ends with "-" (Agent Skills format)`);
  if (name.includes('--')) out.push(`name "${name}" contains "--" (Agent Skills format)`);
  return out;
}
