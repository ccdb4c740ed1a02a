// The `activate` tool, per-run activation state, skill mounts and the access rule for skill paths.
// Refusals a model should read are `runtime_error` (a tool failure on the wire) with `details.reason`.
import path from 'node:path';
import { z } from 'zod';
import { LbotError } from '../errors.js';
import { renderAvailableSkills, type SkillCatalogEntry } from './index.js';

export const ACTIVATE_TOOL_NAME = 'activate';
export const SKILL_MOUNT_PREFIX = '/workspace/.skills';

/** Mount path of a skill inside the box. */
export const skillMountPath = (name: string): string => `${SKILL_MOUNT_PREFIX}/${name}`;

/** Skills activated in one run (`_activated_skills`); it lives for that run only. First activation wins. */
export type ActivationState = { readonly activated: Map<string, SkillCatalogEntry> };

export const createActivationState = (): ActivationState => ({ activated: new Map() });

export type ActivateToolDescriptor = {
  name: typeof ACTIVATE_TOOL_NAME;
  human_desc: string;
  description: string;
  parameters: { type: 'object'; properties: Record<string, unknown>; required: string[]; additionalProperties: false };
};

/** The `activate` tool as listed to a run; the description is built per run from the bound skills. */
export function activateToolDescriptor(visible: readonly SkillCatalogEntry[]): ActivateToolDescriptor {
  const listing = visible.length === 0 ? 'No skills are available in this run.' : renderAvailableSkills(visible);
  return {
    name: ACTIVATE_TOOL_NAME,
    human_desc: 'Activate a skill',
    description: [
      'Activate a skill to load its full instructions.',
      '<skills_instructions>',
      'Call this when the task matches a skill below by its description. Only use skills listed here.',
      'The instructions arrive as the result; follow them. Do not activate a skill that is already active in this turn.',
      `Skill files are under ${SKILL_MOUNT_PREFIX}/<skill-name>/ (read-only); run its scripts with exec and workdir set to that folder after activating it.`,
      'Activation lasts for the current turn only: activate again in a later turn before using the skill.',
      '</skills_instructions>',
      listing,
    ].join('\n'),
    parameters: {
      type: 'object',
      properties: { skill_name: { type: 'string', description: 'skill name only, no arguments' } },
      required: ['skill_name'],
      additionalProperties: false,
    },
  };
}

const ActivateParamsSchema = z.strictObject({ skill_name: z.string() });

export type ActivateResult = { activated: true; skill_name: string; mount_path: string; content: string };

function activationContent(skill: SkillCatalogEntry): string {
  const mount = skillMountPath(skill.name);
  return [
    `<command-message>The "${skill.name}" skill is now active.</command-message>`,
    '<skill-activation>',
    `<skill-name>${skill.name}</skill-name>`,
    `<mount-path>${mount}</mount-path>`,
    '',
    '## Instructions',
    '',
    skill.instructions.trimEnd(),
    '',
    '## Runtime Context',
    '',
    `The skill package is mounted read-only at ${mount}. Relative paths in the instructions resolve against that folder.`,
    `Use \`read\` to open its files, \`exec\` with \`workdir\` set to ${mount} to run its scripts, and \`write\`/\`edit\` (when offered) to change its files.`,
    '</skill-activation>',
  ].join('\n');
}

function names(list: Iterable<string>): string {
  const sorted = [...list].sort();
  return sorted.length === 0 ? 'none' : sorted.join(', ');
}

/**
 * Handles an `activate` call. Only skills bound to the binding (`visible`) can be activated, so a model
 * cannot reach an unbound, unmounted skill (skills-mcp-tools.md §9 Q2). The host package path is never
 * returned (§9 Q10).
 */
export function activateSkill(state: ActivationState, visible: readonly SkillCatalogEntry[], params: unknown): ActivateResult {
  const parsed = ActivateParamsSchema.safeParse(params);
  if (!parsed.success)
    throw new LbotError('invalid_argument', 'activate expects {"skill_name": "<name>"}', { details: { issues: parsed.error.issues.length } });
  const name = parsed.data.skill_name.trim();
  if (name === '') throw new LbotError('invalid_argument', 'skill_name is required');
  const skill = visible.find((s) => s.name === name);
  if (!skill) {
    throw new LbotError('runtime_error', `Skill "${name}" not found. Available skills: ${names(visible.map((s) => s.name))}`, {
      details: { skill_name: name, reason: 'skill_not_bound' },
    });
  }
  if (!state.activated.has(name)) state.activated.set(name, skill);
  return { activated: true, skill_name: name, mount_path: skillMountPath(name), content: activationContent(skill) };
}

export type SkillMount = { host_path: string; mount_path: string; mode: 'ro' };

/**
 * Mounts for a box session serving the run: every bound skill read-only at /workspace/.skills/<name>,
 * sorted by mount path (stable for session fingerprints). A package folder that vanished is skipped
 * with a warning naming the skill (acceptance AC-141). Activation does not change mounts; it unlocks
 * the tools (see `checkSkillPath`, `checkExecSkills`).
 */
export function skillMountPlan(
  visible: readonly SkillCatalogEntry[],
  isDirectory: (hostPath: string) => boolean,
): { mounts: SkillMount[]; warnings: string[] } {
  const mounts: SkillMount[] = [];
  const warnings: string[] = [];
  for (const s of [...visible].sort((a, b) => a.name.localeCompare(b.name))) {
    if (s.package_root.trim() === '' || !isDirectory(s.package_root)) {
      warnings.push(`skill ${s.name}: package_root missing (${s.package_root || 'empty'}); not mounted`);
      continue;
    }
    mounts.push({ host_path: s.package_root, mount_path: skillMountPath(s.name), mode: 'ro' });
  }
  return { mounts, warnings };
}

/** Splits a virtual path into the skill it names (if any) and the path inside the package. */
export function parseSkillMountPath(p: string): { skill: string | null; inner: string } {
  const raw = p.trim() === '' ? '/workspace' : p.trim();
  const normal = path.posix.normalize(raw).replace(/\/+$/, '') || '/';
  if (normal === SKILL_MOUNT_PREFIX) throw new LbotError('invalid_argument', `Path must include a skill name under ${SKILL_MOUNT_PREFIX}/<skill-name>.`);
  if (!normal.startsWith(`${SKILL_MOUNT_PREFIX}/`)) return { skill: null, inner: normal };
  const rest = normal.slice(SKILL_MOUNT_PREFIX.length + 1);
  const slash = rest.indexOf('/');
  const skill = slash === -1 ? rest : rest.slice(0, slash);
  return { skill, inner: slash === -1 ? '' : rest.slice(slash + 1) };
}

export type SkillAccess = 'read' | 'write' | 'exec';

function notAvailable(name: string, state: ActivationState, visible: readonly SkillCatalogEntry[], access: SkillAccess): LbotError {
  const bound = visible.some((s) => s.name === name);
  const what = access === 'read' ? 'read' : access === 'write' ? 'changed' : 'used by exec';
  const why = bound ? `it must be activated first: call the \`activate\` tool with skill_name "${name}", then retry` : 'it is not bound to this binding';
  return new LbotError(
    'runtime_error',
    `Skill "${name}" cannot be ${what} here: ${why}. Activated skills: ${names(state.activated.keys())}. Visible skills: ${names(visible.map((s) => s.name))}.`,
    {
      details: { skill: name, access, reason: bound ? 'skill_not_activated' : 'skill_not_bound', activated: [...state.activated.keys()].sort() },
    },
  );
}

/**
 * The access rule for a virtual path (skills-mcp-tools.md §2.1.1): bound skills are readable; writing
 * and executing need the skill activated in this run. Returns null for paths outside the skill mounts.
 */
export function checkSkillPath(
  state: ActivationState,
  visible: readonly SkillCatalogEntry[],
  virtualPath: string,
  access: SkillAccess,
): { skill: SkillCatalogEntry; inner: string } | null {
  const { skill: name, inner } = parseSkillMountPath(virtualPath);
  if (name === null) return null;
  const activated = state.activated.get(name);
  if (activated) return { skill: activated, inner };
  const bound = visible.find((s) => s.name === name);
  if (bound && access === 'read') return { skill: bound, inner };
  throw notAvailable(name, state, visible, access);
}

const SKILL_REF = /\/workspace\/\.skills\/([A-Za-z0-9_-]+)/g;
/** `.skills/<name>` relative to the default workdir /workspace, e.g. `sh .skills/x/run.sh`. */
const RELATIVE_SKILL_REF = /(?:^|[\s'"=;|&(<>])(?:\.\/)?\.skills\/([A-Za-z0-9_-]+)/g;

/**
 * The rule for one `exec` call: every skill its command or workdir references must be activated, and
 * one call may touch only one skill package (acceptance AC-139). Returns that skill, or null.
 */
export function checkExecSkills(
  state: ActivationState,
  visible: readonly SkillCatalogEntry[],
  call: { command: string; workdir?: string | undefined },
): SkillCatalogEntry | null {
  const referenced = new Set<string>();
  for (const m of call.command.matchAll(SKILL_REF)) if (m[1]) referenced.add(m[1]);
  for (const m of call.command.matchAll(RELATIVE_SKILL_REF)) if (m[1]) referenced.add(m[1]);
  if (call.workdir !== undefined) {
    const { skill } = parseSkillMountPath(call.workdir);
    if (skill !== null) referenced.add(skill);
  }
  if (referenced.size > 1) {
    throw new LbotError(
      'runtime_error',
      `One exec call may use only one skill package; this one references ${names(referenced)}. Split it into one call per skill.`,
      {
        details: { skills: [...referenced].sort(), reason: 'multiple_skills' },
      },
    );
  }
  const [only] = referenced;
  if (only === undefined) return null;
  const hit = state.activated.get(only);
  if (!hit) throw notAvailable(only, state, visible, 'exec');
  return hit;
}
