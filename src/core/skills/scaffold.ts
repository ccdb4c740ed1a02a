// `lbot skill new`: writes a new Agent Skills package folder to edit, then install.
import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LbotError } from '../errors.js';
import { renderSkillMd } from './frontmatter.js';
import { validateSkillName } from './names.js';

export type ScaffoldOptions = {
  name: string;
  description: string;
  /** Folder the package folder `<name>/` is created in. */
  parentDir: string;
  license?: string | undefined;
  /** Adds `scripts/run.sh` (executable) and mentions it in the instructions. */
  withScripts?: boolean | undefined;
};

const MAX_DESCRIPTION = 1024;

function title(name: string): string {
  return name
    .split(/[-_]+/)
    .filter(Boolean)
    .map((w) => w[0]?.toUpperCase() + w.slice(1))
    .join(' ');
}

/** Checks a description for a new skill: non-empty, at most 1,024 characters (Agent Skills format). */
export function validateDescription(raw: string): string {
  const d = raw.trim();
  if (d === '') throw new LbotError('invalid_argument', 'a skill needs a description: say what it does and when to use it');
  if (d.length > MAX_DESCRIPTION)
    throw new LbotError('invalid_argument', `the description is ${d.length} characters; the Agent Skills format allows ${MAX_DESCRIPTION}`);
  return d;
}

/** Creates `<parentDir>/<name>/` with a SKILL.md (and optionally scripts/run.sh); refuses to overwrite. */
export async function scaffoldSkill(opts: ScaffoldOptions): Promise<{ name: string; path: string; files: string[] }> {
  const name = validateSkillName(opts.name);
  const description = validateDescription(opts.description);
  const dir = path.resolve(opts.parentDir, name);
  if (await stat(dir).catch(() => null)) {
    throw new LbotError('skill.exists', `${dir} already exists`, { details: { path: dir }, hint: 'choose another name or --dir' });
  }
  const frontmatter: Record<string, unknown> = { name, description };
  if (opts.license) frontmatter.license = opts.license;
  const steps = opts.withScripts
    ? ['1. Explain what you are about to do.', '2. Run `scripts/run.sh` from the skill folder and read its output.', '3. Answer from that output.']
    : ['1. Describe the first step.', '2. Describe the next step.'];
  const body = [`# ${title(name)}`, '', '## When to use', '', description, '', '## Instructions', '', ...steps, ''].join('\n');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'SKILL.md'), renderSkillMd(frontmatter, body), { flag: 'wx' });
  const files = ['SKILL.md'];
  if (opts.withScripts) {
    await mkdir(path.join(dir, 'scripts'));
    const script = path.join(dir, 'scripts', 'run.sh');
    await writeFile(
      script,
      `#!/bin/sh\n# Entry point of the ${name} skill; runs inside the box with the skill folder as workdir.\nset -eu\necho "hello from ${name}"\n`,
      { flag: 'wx' },
    );
    await chmod(script, 0o755);
    files.push('scripts/run.sh');
  }
  return { name, path: dir, files };
}
