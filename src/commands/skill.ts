// `lbot skill …`: install, inspect, verify and scaffold Agent Skills packages (docs/skills.md).
import { lbotInvocation } from './shared/invocation.js';
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import { isRecord } from '../core/json.js';
import type { InstallContext, InstalledResult, PreviewedSkill } from '../core/skills/install.js';
import type { InstalledSkill } from '../core/skills/store.js';
import type { VerifyReport } from '../core/skills/verify.js';
import type { ValidationReport } from '../core/skills/validate.js';
import { collect, parseFlags } from './shared/flags.js';
import type { CliContext } from './shared/context.js';
import type { GetContext } from './shared/context.js';
import * as shapes from '../core/shapes/index.js';

const InstallFlagsSchema = z.object({
  preview: z.boolean().default(false),
  replace: z.boolean().default(false),
  frozen: z.boolean().default(false),
  name: z.string().min(1).optional(),
  pick: z.array(z.string()).default([]),
  owner: z.string().min(1).optional(),
  repo: z.string().min(1).optional(),
  ref: z.string().min(1).optional(),
});
const NewFlagsSchema = z.object({
  description: z.string().optional(),
  dir: z.string().default('.'),
  license: z.string().optional(),
  scripts: z.boolean().optional(),
  install: z.boolean().default(false),
});
const ValidateFlagsSchema = z.object({ strict: z.boolean().default(false) });

async function installContext(ctx: CliContext, signal?: AbortSignal): Promise<InstallContext> {
  const [{ skillLimitsFromConfig }, { createSkillFetcher }] = await Promise.all([import('../core/skills/limits.js'), import('../runtime/skills/fetcher.js')]);
  return { dataDir: ctx.flags.dataDir, limits: skillLimitsFromConfig(ctx.configFile().config), fetcher: createSkillFetcher(), signal, cwd: process.cwd() };
}

const short = (sha: string | null | undefined) => (sha ? sha.slice(0, 12) : '-');

function renderPreview(v: { source: string; skills: PreviewedSkill[] }): string {
  return v.skills
    .map((s) => {
      const lines = [
        `${s.name}${s.version ? ` ${s.version}` : ''}: ${s.description || '(no description)'}`,
        `  from: ${v.source}${s.source_path ? ` (${s.source_path})` : ''}`,
        `  into: ${s.package_root}${s.exists ? ' (exists: needs --replace)' : ''}`,
        `  files: ${s.files.join(', ')}`,
      ];
      for (const e of s.errors) lines.push(`  error[${e.code}]: ${e.message}`);
      for (const w of s.warnings) lines.push(`  warning: ${w}`);
      return lines.join('\n');
    })
    .join('\n');
}

function renderInstalled(v: { skills: InstalledResult[] }): string {
  return v.skills
    .map(
      (s) =>
        `${s.replaced ? 'replaced' : 'installed'} ${s.name} (sha256 ${short(s.sha256)}${s.previous_sha256 && s.previous_sha256 !== s.sha256 ? `, was ${short(s.previous_sha256)}` : ''}) from ${s.source}`,
    )
    .join('\n');
}

type PublicSkill = Omit<InstalledSkill, 'provenance'> & {
  source: string | null;
  source_type: string | null;
  sha256: string | null;
  installed_at: string | null;
};

function publicSkill(s: InstalledSkill): PublicSkill {
  const { provenance, ...rest } = s;
  return {
    ...rest,
    source: provenance?.source ?? null,
    source_type: provenance?.source_type ?? null,
    sha256: provenance?.sha256 ?? null,
    installed_at: provenance?.installed_at ?? null,
  };
}

function renderList(skills: ReadonlyArray<Omit<PublicSkill, 'instructions' | 'frontmatter'>>, root: string): string {
  if (skills.length === 0) return `no skills installed in ${root}`;
  const width = Math.max(...skills.map((s) => s.name.length));
  return skills
    .map(
      (s) =>
        `${String(s.name).padEnd(width)}  ${s.invalid ? '[invalid] ' : ''}${typeof s.description === 'string' && s.description !== '' ? s.description : '(no description)'}`,
    )
    .join('\n');
}

function renderShow(s: Record<string, unknown> & { files: Array<{ path: string; is_dir: boolean }> }): string {
  const fm = isRecord(s.frontmatter) ? s.frontmatter : {};
  const row = (k: string, v: unknown) => (v === null || v === undefined || v === '' ? null : `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const head = [
    row('name', s.name),
    row('display_name', s.display_name !== s.name ? s.display_name : null),
    row('description', s.description),
    row('version', s.version),
    row('license', fm.license),
    row('allowed-tools', fm['allowed-tools']),
    row('compatibility', fm.compatibility),
    row('package_root', s.package_root),
    row('source', s.source),
    row('sha256', s.sha256),
    row('installed_at', s.installed_at),
    row(
      'files',
      s.files
        .filter((f) => !f.is_dir)
        .map((f) => f.path)
        .join(', '),
    ),
  ].filter((l): l is string => l !== null);
  const warnings = Array.isArray(s.warnings) ? s.warnings.map((w) => `warning: ${String(w)}`) : [];
  return [...head, ...warnings, '', String(s.instructions)].join('\n');
}

function renderVerify(r: VerifyReport): string {
  if (r.skills.length === 0) return 'no skills installed';
  return r.skills
    .map((s) => `${s.status.padEnd(9)}  ${s.name}${s.status === 'modified' ? ` (lock ${short(s.expected)}, disk ${short(s.actual)})` : ''}`)
    .join('\n');
}

function renderValidation(r: ValidationReport): string {
  return r.skills
    .map((s) =>
      [
        `${s.ok ? 'ok' : 'FAIL'}  ${s.name}  ${s.location}`,
        ...s.errors.map((e) => `  error[${e.code}]: ${e.message}`),
        ...s.warnings.map((w) => `  warning: ${w}`),
      ].join('\n'),
    )
    .join('\n');
}

async function promptNew(name: string, flags: z.output<typeof NewFlagsSchema>): Promise<{ description: string; scripts: boolean }> {
  const p = await import('@clack/prompts');
  p.intro(`New skill ${name}`);
  const description = await p.text({
    message: 'What does it do, and when should it be used?',
    validate: (v) => (v && v.trim() !== '' ? undefined : 'a description is required'),
  });
  if (p.isCancel(description)) throw new LbotError('cancelled', 'skill new was cancelled; nothing was written');
  const scripts = flags.scripts ?? (await p.confirm({ message: 'Add a scripts/run.sh entry point?', initialValue: false }));
  if (p.isCancel(scripts)) throw new LbotError('cancelled', 'skill new was cancelled; nothing was written');
  p.outro('writing the package');
  return { description, scripts };
}

// Over 100 lines because it is the command table of `lbot skill`: one registration per subcommand, each
// parsing flags and calling core/skills; the logic lives there.
export function registerSkill(program: Command, getCtx: GetContext): void {
  const skill = program.command('skill').description('Install, inspect and verify Agent Skills packages (SKILL.md folders)');

  skill
    .command('install [source]')
    .description('install a skill from a folder, a .zip, a git remote (git+https://…, …/repo.git, file://…) or a GitHub URL')
    .option('--preview', 'show what would be installed; write nothing')
    .option('--replace', 'overwrite an installed skill of the same name (its digest stays in the lock history)')
    .option('--name <name>', 'install under this name instead of the frontmatter/folder name')
    .option('--pick <path>', 'with several skills in the source: the folder (or name) to install; repeatable', collect)
    .option('--frozen', 'install exactly what skills.lock.json records and fail on any mismatch (no SOURCE: restore every locked skill)')
    .option('--owner <owner>', 'with a GitHub URL: refuse it unless the owner matches')
    .option('--repo <repo>', 'with a GitHub URL: refuse it unless the repository matches')
    .option('--ref <ref>', 'git branch, tag or commit to install from')
    .action(async (source: string | undefined, raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(InstallFlagsSchema, raw);
      const { installSkills, previewInstall } = await import('../core/skills/install.js');
      // An interrupted install cleans up (exit 130).
      const ictx = await installContext(ctx, ctx.signal);
      if (flags.frozen) {
        if (flags.preview || flags.replace || flags.name)
          throw new LbotError('invalid_argument', '--frozen cannot be combined with --preview, --replace or --name');
        const { installFrozen } = await import('../core/skills/frozen.js');
        const result = await installFrozen({ source, picks: flags.pick }, ictx);
        ctx.output.item(
          shapes.SkillInstall,
          result,
          (v) => v.skills.map((s) => `${s.status.padEnd(9)}  ${s.name} (sha256 ${short(s.sha256)})`).join('\n') || 'skills.lock.json records no skills',
        );
        return;
      }
      if (source === undefined)
        throw new LbotError('invalid_argument', 'missing SOURCE: a skill folder, .zip file or URL (or use --frozen to install what the lock records)');
      const opts = { source, name: flags.name, picks: flags.pick, replace: flags.replace, owner: flags.owner, repo: flags.repo, ref: flags.ref };
      if (flags.preview) {
        ctx.output.item(shapes.SkillInstall, await previewInstall(opts, ictx), renderPreview);
        return;
      }
      const result = await installSkills(opts, ictx);
      for (const s of result.skills) for (const w of s.warnings) ctx.output.warn(`${s.name}: ${w}`);
      ctx.output.item(shapes.SkillInstall, result, renderInstalled);
    });

  skill
    .command('list')
    .description('list installed skills with their descriptions')
    .action(async () => {
      const ctx = getCtx();
      const { listSkills, skillsRoot } = await import('../core/skills/store.js');
      const skills = (await listSkills(ctx.flags.dataDir)).map((s) => {
        const { instructions: _i, frontmatter: _f, ...rest } = publicSkill(s);
        return rest;
      });
      ctx.output.list(shapes.Skill, skills, (v) => renderList(v, skillsRoot(ctx.flags.dataDir)));
    });

  skill
    .command('show <name>')
    .description('show one skill: metadata, provenance, files and instructions')
    .action(async (name: string) => {
      const ctx = getCtx();
      const { getSkill, listSkillFiles } = await import('../core/skills/store.js');
      const s = await getSkill(ctx.flags.dataDir, name);
      const files = await listSkillFiles(ctx.flags.dataDir, name);
      ctx.output.item(
        shapes.SkillDetail,
        { ...publicSkill(s), allowed_tools: s.frontmatter['allowed-tools'] ?? null, history: s.provenance?.history ?? [], files },
        renderShow,
      );
    });

  skill
    .command('cat <name> <path>')
    .description('print one file of an installed skill (paths stay inside the package)')
    .action(async (name: string, file: string) => {
      const ctx = getCtx();
      const { readSkillFile } = await import('../core/skills/store.js');
      ctx.output.item(shapes.SkillFile, await readSkillFile(ctx.flags.dataDir, name, file), (v) => v.content);
    });

  skill
    .command('remove <name>')
    .alias('rm')
    .description('uninstall a skill and drop it from skills.lock.json')
    .action(async (name: string) => {
      const ctx = getCtx();
      const { removeSkill } = await import('../core/skills/store.js');
      ctx.output.item(shapes.Removed, { ok: true, removed: (await removeSkill(ctx.flags.dataDir, name)).removed }, (v) => `removed ${v.removed}`);
    });

  skill
    .command('new <name>')
    .description('scaffold a new skill package folder (prompts on a terminal; flags otherwise)')
    .option('--description <text>', 'what the skill does and when to use it (required off a terminal)')
    .option('--dir <dir>', 'folder to create <name>/ in', '.')
    .option('--license <id>', 'license field for the frontmatter (e.g. MIT)')
    .option('--scripts', 'add an executable scripts/run.sh')
    .option('--install', 'install the new package right away')
    .action(async (name: string, raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(NewFlagsSchema, raw);
      const interactive = flags.description === undefined && !ctx.flags.json && process.stdin.isTTY === true && process.stdout.isTTY === true;
      const answers = interactive ? await promptNew(name, flags) : { description: flags.description ?? '', scripts: flags.scripts ?? false };
      if (!interactive && flags.description === undefined) throw new LbotError('invalid_argument', '--description is required when not running on a terminal');
      const { scaffoldSkill } = await import('../core/skills/scaffold.js');
      const created = await scaffoldSkill({
        name,
        description: answers.description,
        parentDir: flags.dir,
        license: flags.license,
        withScripts: answers.scripts,
      });
      let installed: InstalledResult[] = [];
      if (flags.install) {
        const { installSkills } = await import('../core/skills/install.js');
        installed = (await installSkills({ source: created.path }, await installContext(ctx))).skills;
      }
      ctx.output.item(shapes.SkillCreated, { ...created, installed }, (v) =>
        [
          `created ${v.path} (${v.files.join(', ')})`,
          ...(v.installed.length > 0
            ? [renderInstalled({ skills: v.installed })]
            : [`next: edit ${v.path}/SKILL.md, then \`${lbotInvocation()} skill install ${v.path}\``]),
        ].join('\n'),
      );
    });

  skill
    .command('validate <target>')
    .description('check a skill folder, .zip, URL or installed skill against the package rules and the Agent Skills format')
    .option('--strict', 'treat format warnings as failures')
    .action(async (target: string, raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(ValidateFlagsSchema, raw);
      const { validateSkills } = await import('../core/skills/validate.js');
      const report = await validateSkills(target, await installContext(ctx), flags.strict);
      if (report.ok) {
        ctx.output.item(shapes.SkillReport, report, renderValidation);
        return;
      }
      ctx.output.text(renderValidation(report));
      const first = report.skills.flatMap((s) => s.errors)[0];
      throw new LbotError(
        first?.code ?? 'invalid_argument',
        first ? `validation failed: ${first.message}` : 'validation failed: format warnings with --strict',
        { details: { report } },
      );
    });

  skill
    .command('verify [names...]')
    .description('re-hash installed skills and compare with skills.lock.json; exits 1 on any drift')
    .action(async (names: string[]) => {
      const ctx = getCtx();
      const { verifySkills } = await import('../core/skills/verify.js');
      const report = await verifySkills(ctx.flags.dataDir, names);
      if (report.ok) {
        ctx.output.item(shapes.SkillReport, report, renderVerify);
        return;
      }
      ctx.output.text(renderVerify(report));
      const bad = report.skills.filter((s) => s.status !== 'ok');
      throw new LbotError('skill.drift', `${bad.length} skill(s) differ from skills.lock.json: ${bad.map((s) => `${s.name} (${s.status})`).join(', ')}`, {
        details: { skills: report.skills },
        hint: 'reinstall with `lbot skill install --frozen` to restore the locked content, or reinstall with --replace to accept the change',
      });
    });
}
