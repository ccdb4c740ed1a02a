// Staging a source: unpack or clone it into a work folder, find its packages, name them and check them.
import { mkdir, readdir, realpath, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { LbotError } from '../errors.js';
import { extractZip } from './archive.js';
import type { SkillFetcher } from './fetcher.js';
import { checkPackageLayout, type LayoutReport } from './layout.js';
import type { SkillLimits } from './limits.js';
import { sanitizeSkillName, validateSkillName } from './names.js';
import { discoverPackages, readSkillPackage, type SkillPackage } from './package.js';
import type { SkillSource } from './source.js';
import { copyPackageTree, IGNORED_SOURCE_NAMES, walkTree } from './tree.js';

export type StageDeps = {
  limits: SkillLimits;
  fetcher: SkillFetcher;
  signal?: AbortSignal | undefined;
  onFile?: ((info: { path: string; index: number; total: number }) => void) | undefined;
};

export type Candidate = {
  /** Folder of the package inside the source root ('' = the root). */
  source_path: string;
  /** Where the package is now (inside the source or the work folder). */
  dir: string;
  /** The install name: frontmatter `name`, else the folder (or archive) name, sanitised. */
  name: string;
  /** Set when the frontmatter name breaks the name rule; the install fails with it unless --name is given. */
  nameError: LbotError | null;
  pkg: SkillPackage;
};

export type StagedSource = {
  root: string;
  /** Name base for a package at the root: the archive's top folder, the zip stem, the repo or folder name. */
  rootBase: string;
  commit: string | null;
  candidates: Candidate[];
  /** True when packages must be copied out of `root` (directory and git sources), false when `root` is scratch. */
  copyOut: boolean;
};

function stem(file: string): string {
  return path.basename(file).replace(/\.zip$/i, '');
}

async function unwrap(root: string): Promise<{ root: string; top: string | null }> {
  const names = await readdir(root);
  const only = names[0];
  if (names.length === 1 && only !== undefined && (await stat(path.join(root, only))).isDirectory()) return { root: path.join(root, only), top: only };
  return { root, top: null };
}

async function enterSubdir(root: string, subdir: string, label: string): Promise<string> {
  if (subdir === '') return root;
  const target = path.resolve(root, ...subdir.split('/'));
  const realRoot = await realpath(root);
  let real: string;
  try {
    real = await realpath(target);
  } catch {
    throw new LbotError('skill.invalid_source', `${label} has no folder ${subdir}`, { details: { subdir } });
  }
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) {
    throw new LbotError('skill.unsafe_path', `the folder ${subdir} in ${label} resolves outside it`, { details: { subdir } });
  }
  return real;
}

function deriveName(source_path: string, rootBase: string, pkg: SkillPackage): { name: string; nameError: LbotError | null } {
  const leaf = source_path.split('/').at(-1) ?? '';
  const fallback = sanitizeSkillName(leaf !== '' ? leaf : rootBase);
  if (pkg.declared_name === null) return { name: fallback, nameError: null };
  try {
    return { name: validateSkillName(pkg.declared_name, 'frontmatter name'), nameError: null };
  } catch (err) {
    if (err instanceof LbotError) return { name: pkg.declared_name, nameError: err };
    throw err;
  }
}

/** Unpacks/clones `source` under `work` (a fresh folder) and lists the packages it holds, named. */
export async function stageSource(source: SkillSource, work: string, deps: StageDeps): Promise<StagedSource> {
  await mkdir(work, { recursive: true });
  let root: string;
  let rootBase: string;
  let commit: string | null = null;
  let copyOut = true;
  switch (source.type) {
    case 'directory':
      root = source.location;
      rootBase = path.basename(source.location);
      break;
    case 'zip':
    case 'url': {
      let archive = source.location;
      if (source.type === 'url') {
        archive = path.join(work, source.filename.replace(/[^A-Za-z0-9._-]/g, '-') || 'download.zip');
        await deps.fetcher.download({ url: source.location, dest: archive, maxBytes: deps.limits.max_archive_bytes, signal: deps.signal });
      }
      const extracted = path.join(work, 'x');
      await extractZip(archive, extracted, { limits: deps.limits, signal: deps.signal, onFile: deps.onFile });
      const top = await unwrap(extracted);
      root = await enterSubdir(top.root, source.type === 'url' ? source.subdir : '', source.location);
      rootBase = top.top ?? stem(source.type === 'url' ? source.filename : source.location);
      copyOut = false;
      break;
    }
    case 'git': {
      const clone = path.join(work, 'clone');
      // The packed history counts like an archive, the whole clone like unpacked bytes.
      commit = (
        await deps.fetcher.gitClone({
          url: source.location,
          ref: source.ref,
          dest: clone,
          maxGitBytes: deps.limits.max_archive_bytes,
          maxTotalBytes: deps.limits.max_archive_bytes + deps.limits.max_uncompressed_bytes,
          signal: deps.signal,
        })
      ).commit;
      root = await enterSubdir(clone, source.subdir, source.location);
      const leaf = source.subdir.split('/').at(-1) ?? '';
      rootBase = leaf !== '' ? leaf : path.basename(source.location.replace(/\/+$/, '')).replace(/\.git$/, '');
      break;
    }
  }
  const found = await discoverPackages(root, 2);
  if (found.length === 0) {
    throw new LbotError('skill.missing_manifest', `No SKILL.md found in ${source.location} or its subfolders (max depth 2)`, {
      details: { source: source.location },
      hint: 'a skill package is a folder with a SKILL.md file; point at that folder or at an archive that contains it',
    });
  }
  const candidates: Candidate[] = [];
  for (const source_path of found) {
    const dir = source_path === '' ? root : path.join(root, ...source_path.split('/'));
    const pkg = await readSkillPackage(dir);
    candidates.push({ source_path, dir, pkg, ...deriveName(source_path, rootBase, pkg) });
  }
  return { root, rootBase, commit, candidates, copyOut };
}

/** Picks the candidates to install: all of `picks`, or the only one; several without picks is an error. */
export function selectCandidates(staged: StagedSource, picks: readonly string[]): Candidate[] {
  const label = (p: string) => (p === '' ? '.' : p);
  const available = staged.candidates.map((c) => label(c.source_path)).join(', ');
  if (picks.length === 0) {
    if (staged.candidates.length === 1 && staged.candidates[0]) return [staged.candidates[0]];
    throw new LbotError('invalid_argument', `Multiple skills found; choose one or more with --pick: ${available}`, {
      details: { available: staged.candidates.map((c) => label(c.source_path)) },
    });
  }
  const wanted = [
    ...new Set(
      picks
        .map((p) =>
          p
            .trim()
            .replace(/\\/g, '/')
            .replace(/^\/+|\/+$/g, ''),
        )
        .map((p) => (p === '.' ? '' : p)),
    ),
  ];
  return wanted.map((p) => {
    const hit = staged.candidates.find((c) => c.source_path === p || c.name === p);
    if (!hit)
      throw new LbotError('invalid_argument', `--pick ${JSON.stringify(label(p))} is not a skill in the source. Available: ${available}`, {
        details: { pick: p },
      });
    return hit;
  });
}

/** The files of a candidate, for previews (ignored runtime folders left out). */
export async function candidateFiles(dir: string): Promise<string[]> {
  return (await walkTree(dir, (_rel, name) => IGNORED_SOURCE_NAMES.has(name))).filter((e) => e.kind !== 'dir').map((e) => e.rel);
}

/** Layout report of a candidate. */
export function checkCandidate(c: Candidate): Promise<LayoutReport> {
  return checkPackageLayout(c.pkg, c.source_path === '' ? path.basename(c.dir) : (c.source_path.split('/').at(-1) ?? path.basename(c.dir)));
}

/** Moves (scratch sources) or copies (directories, clones) a candidate's tree to `dest`. */
export async function materialise(staged: StagedSource, c: Candidate, dest: string, deps: StageDeps): Promise<void> {
  if (staged.copyOut) {
    await copyPackageTree(c.dir, dest, deps.limits, deps.signal);
    return;
  }
  await rename(c.dir, dest);
}
