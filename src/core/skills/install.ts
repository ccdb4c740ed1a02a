// `lbot skill install`: stage the source, check every package, then move them into place and record
// them in the lock in one short commit step; any failure before or during it leaves no trace.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LbotError } from '../errors.js';
import { treeDigest } from './digest.js';
import type { SkillFetcher } from './fetcher.js';
import { checkPackageLayout, type LayoutIssue } from './layout.js';
import type { SkillLimits } from './limits.js';
import { acquireSkillMutex, readLock, writeLock, type LockEntry, type LockFile } from './lock.js';
import { validateSkillName } from './names.js';
import { readSkillPackage } from './package.js';
import { resolveSkillSource, type SkillSource, type SourceOptions } from './source.js';
import { candidateFiles, checkCandidate, materialise, selectCandidates, stageSource, type Candidate, type StagedSource } from './stage.js';
import { skillsRoot, stagingRoot } from './store.js';
import { normaliseModes } from './tree.js';

export type InstallPhase = 'fetch' | 'check' | 'place' | 'lock';

export type InstallContext = {
  dataDir: string;
  limits: SkillLimits;
  fetcher: SkillFetcher;
  signal?: AbortSignal | undefined;
  /** Working directory that relative sources resolve against. */
  cwd?: string | undefined;
  now?: (() => Date) | undefined;
  /** Progress: the phase about to start. A throw here interrupts the install like a crash would. */
  onPhase?: ((phase: InstallPhase) => void) | undefined;
  /** Progress while an archive is unpacked. */
  onFile?: ((info: { path: string; index: number; total: number }) => void) | undefined;
};

export type InstallOptions = SourceOptions & {
  source: string;
  /** Install under this name instead of the derived one (one package only). */
  name?: string | undefined;
  /** Packages to install when the source holds several (their folder inside the source, or their name). */
  picks?: readonly string[] | undefined;
  /** Overwrite an installed skill of the same name, keeping its digest in the lock history. */
  replace?: boolean | undefined;
};

export type PreviewedSkill = {
  name: string;
  display_name: string;
  description: string;
  version: string | null;
  source_path: string;
  files: string[];
  /** Where the install would put it. */
  package_root: string;
  /** True when a skill of that name is installed already (install needs --replace). */
  exists: boolean;
  errors: LayoutIssue[];
  warnings: string[];
};

export type InstalledResult = {
  name: string;
  description: string;
  version: string | null;
  package_root: string;
  sha256: string;
  previous_sha256: string | null;
  replaced: boolean;
  source: string;
  warnings: string[];
};

export type Prepared = { candidate: Candidate; name: string; readyDir: string; sha256: string; warnings: string[]; version: string | null };

/** The `source` recorded in the lock: absolute path for local sources, the URL as given otherwise. */
export function lockSourceOf(raw: string, source: SkillSource): string {
  return source.type === 'directory' || source.type === 'zip' || (source.type === 'git' && path.isAbsolute(source.location)) ? source.location : raw.trim();
}

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null))?.isDirectory() === true;
}

function interrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new LbotError('cancelled', 'skill install was interrupted; nothing was installed');
}

/** Shows what an install would do; writes nothing under the data dir (acceptance AC-131). */
export async function previewInstall(opts: InstallOptions, ctx: InstallContext): Promise<{ source: string; skills: PreviewedSkill[] }> {
  const source = await resolveSkillSource(opts.source, opts, ctx.cwd);
  const work = await mkdtemp(path.join(tmpdir(), 'lbot-skill-preview-'));
  try {
    const staged = await stageSource(source, path.join(work, 'stage'), { ...ctx });
    const picked = opts.picks && opts.picks.length > 0 ? selectCandidates(staged, opts.picks) : staged.candidates;
    const lock = await readLock(ctx.dataDir);
    const skills: PreviewedSkill[] = [];
    for (const c of picked) {
      const name = opts.name !== undefined && picked.length === 1 ? validateSkillName(opts.name, '--name') : c.name;
      const report = await checkCandidate(c);
      const errors = c.nameError && opts.name === undefined ? [{ code: c.nameError.code, message: c.nameError.message }, ...report.errors] : report.errors;
      const target = path.join(skillsRoot(ctx.dataDir), name);
      skills.push({
        name,
        display_name: c.pkg.display_name || name,
        description: c.pkg.description,
        version: c.pkg.version,
        source_path: c.source_path,
        files: await candidateFiles(c.dir),
        package_root: target,
        exists: (await isDir(target)) || lock.skills[name] !== undefined,
        errors,
        warnings: report.warnings,
      });
    }
    return { source: lockSourceOf(opts.source, source), skills };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Names, copies, checks, normalises and hashes the chosen packages inside `work`. */
export async function preparePackages(
  staged: StagedSource,
  chosen: Candidate[],
  name: string | undefined,
  work: string,
  ctx: InstallContext,
): Promise<Prepared[]> {
  if (name !== undefined && chosen.length !== 1) throw new LbotError('invalid_argument', '--name can be used only when one skill is installed');
  const names = new Set<string>();
  const out: Prepared[] = [];
  await mkdir(path.join(work, 'ready'), { recursive: true });
  for (const c of chosen) {
    interrupted(ctx.signal);
    if (name === undefined && c.nameError) throw c.nameError;
    const finalName = name !== undefined ? validateSkillName(name, '--name') : c.name;
    if (names.has(finalName))
      throw new LbotError('invalid_argument', `two selected packages would both be installed as ${finalName}; pick one`, { details: { name: finalName } });
    names.add(finalName);
    const readyDir = path.join(work, 'ready', finalName);
    await materialise(staged, c, readyDir, { ...ctx });
    const pkg = await readSkillPackage(readyDir);
    const report = await checkPackageLayout(pkg, c.source_path === '' ? staged.rootBase : (c.source_path.split('/').at(-1) ?? finalName));
    if (name !== undefined) {
      // --name replaces the frontmatter name, so an unusable one is only worth a warning.
      for (const e of report.errors.filter((x) => x.code === 'skill.invalid_name')) report.warnings.push(e.message);
      report.errors = report.errors.filter((x) => x.code !== 'skill.invalid_name');
    }
    const first = report.errors[0];
    if (first) throw new LbotError(first.code, `${finalName}: ${first.message}`, { details: { name: finalName, errors: report.errors } });
    await normaliseModes(readyDir);
    out.push({ candidate: c, name: finalName, readyDir, sha256: await treeDigest(readyDir), warnings: report.warnings, version: pkg.version });
  }
  return out;
}

/**
 * Moves prepared packages into the skills root and writes the lock built by `nextLock`. If anything in
 * this step fails, moved folders are taken back out and replaced ones restored before rethrowing.
 */
export async function commitPackages(
  ctx: InstallContext,
  work: string,
  prepared: Prepared[],
  lock: LockFile,
  nextLock: (lock: LockFile, replacedNames: ReadonlySet<string>) => LockFile,
): Promise<void> {
  const root = skillsRoot(ctx.dataDir);
  await mkdir(root, { recursive: true });
  const moves: Array<{ target: string; backup: string | null; placed: boolean }> = [];
  try {
    ctx.onPhase?.('place');
    const replaced = new Set<string>();
    for (const p of prepared) {
      const target = path.join(root, p.name);
      const move = { target, backup: null as string | null, placed: false };
      moves.push(move);
      if (await isDir(target)) {
        move.backup = path.join(work, `previous-${p.name}`);
        await rename(target, move.backup);
        replaced.add(p.name);
      }
      await rename(p.readyDir, target);
      move.placed = true;
    }
    ctx.onPhase?.('lock');
    await writeLock(ctx.dataDir, nextLock(lock, replaced));
  } catch (err) {
    for (const m of moves.reverse()) {
      if (m.placed) await rename(m.target, path.join(work, `failed-${path.basename(m.target)}-${randomBytes(3).toString('hex')}`)).catch(() => undefined);
      if (m.backup) await rename(m.backup, m.target).catch(() => undefined);
    }
    throw err;
  }
}

/** Runs `body` with the skill mutex held and a fresh work folder under the staging root. */
export async function withStaging<T>(ctx: InstallContext, body: (work: string) => Promise<T>): Promise<T> {
  const release = await acquireSkillMutex(ctx.dataDir);
  const staging = stagingRoot(ctx.dataDir);
  try {
    // Holding the mutex, anything left in the staging root is debris of an interrupted install.
    await rm(staging, { recursive: true, force: true });
    const work = path.join(staging, randomBytes(6).toString('hex'));
    await mkdir(work, { recursive: true });
    try {
      return await body(work);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  } finally {
    await release();
  }
}

/** Installs one or more packages from a source (acceptance AC-130, AC-132…AC-137, AC-221). */
export async function installSkills(opts: InstallOptions, ctx: InstallContext): Promise<{ skills: InstalledResult[] }> {
  const source = await resolveSkillSource(opts.source, opts, ctx.cwd);
  const now = (ctx.now ?? (() => new Date()))().toISOString();
  const lockSource = lockSourceOf(opts.source, source);
  return withStaging(ctx, async (work) => {
    ctx.onPhase?.('fetch');
    const staged = await stageSource(source, path.join(work, 'stage'), { ...ctx });
    interrupted(ctx.signal);
    ctx.onPhase?.('check');
    const prepared = await preparePackages(staged, selectCandidates(staged, opts.picks ?? []), opts.name, work, ctx);
    const lock = await readLock(ctx.dataDir);
    for (const p of prepared) {
      const exists = (await isDir(path.join(skillsRoot(ctx.dataDir), p.name))) || lock.skills[p.name] !== undefined;
      if (exists && !opts.replace) {
        const from = lock.skills[p.name]?.source;
        throw new LbotError('skill.exists', `skill ${p.name} is already installed${from ? ` (from ${from})` : ''}`, {
          details: { name: p.name },
          hint: 'add --replace to overwrite it (its current digest is kept in the lock history), or --name to install a second copy',
        });
      }
    }
    interrupted(ctx.signal);
    const results: InstalledResult[] = [];
    await commitPackages(ctx, work, prepared, lock, (current, replacedNames) => {
      const skills: Record<string, LockEntry> = { ...current.skills };
      for (const p of prepared) {
        const old = current.skills[p.name];
        const changed = old !== undefined && old.sha256 !== p.sha256;
        const history = old
          ? [
              ...old.history,
              ...(changed ? [{ sha256: old.sha256, source: old.source, version: old.version, installed_at: old.installed_at, replaced_at: now }] : []),
            ]
          : [];
        skills[p.name] = {
          source: lockSource,
          source_type: source.type,
          source_path: p.candidate.source_path,
          ref: source.type === 'git' ? source.ref : null,
          commit: staged.commit,
          version: p.version,
          sha256: p.sha256,
          installed_at: now,
          history,
        };
        results.push({
          name: p.name,
          description: p.candidate.pkg.description,
          version: p.version,
          package_root: path.join(skillsRoot(ctx.dataDir), p.name),
          sha256: p.sha256,
          previous_sha256: old?.sha256 ?? null,
          replaced: old !== undefined || replacedNames.has(p.name),
          source: lockSource,
          warnings: p.warnings,
        });
      }
      return { ...current, skills };
    });
    return { skills: results };
  });
}
