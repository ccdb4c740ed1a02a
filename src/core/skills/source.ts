// What `lbot skill install SRC` points at: a directory, a zip, a git remote or a GitHub archive URL.
// Every check here runs before any network request (acceptance AC-142).
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { LbotError } from '../errors.js';

export type SkillSource =
  | { type: 'directory'; location: string }
  | { type: 'zip'; location: string }
  | { type: 'git'; location: string; ref: string | null; subdir: string }
  | { type: 'url'; location: string; filename: string; subdir: string };

export type SourceOptions = {
  /** With a GitHub URL: the URL's owner must equal this. */
  owner?: string | undefined;
  /** With a GitHub URL: the URL's repository must equal this. */
  repo?: string | undefined;
  /** Git ref to check out (overrides a `#ref` suffix). */
  ref?: string | undefined;
};

const GITHUB_ARCHIVE_HOSTS = new Set(['codeload.github.com', 'api.github.com']);

function invalid(src: string, why: string, hint?: string): LbotError {
  return new LbotError('skill.invalid_source', `cannot install from ${src}: ${why}`, {
    details: { source: src, reason: why },
    hint:
      hint ??
      'give a skill folder, a .zip file, a GitHub URL (https://github.com/OWNER/REPO[/tree/REF/DIR]) or a git remote (git+https://…, …/repo.git, file://…)',
  });
}

function splitSegments(pathname: string): string[] {
  return pathname
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
}

function checkSubdir(src: string, segments: string[]): string {
  if (segments.some((s) => s === '..' || s === '.' || s.includes('/') || s.includes('\\') || s.includes('\0')))
    throw invalid(src, 'the folder in the URL is not a plain relative path');
  return segments.join('/');
}

function checkOwnerRepo(src: string, owner: string, repo: string, opts: SourceOptions): void {
  if (opts.owner !== undefined && opts.owner !== owner) throw invalid(src, `the URL's owner "${owner}" does not match --owner "${opts.owner}"`);
  if (opts.repo !== undefined && opts.repo !== repo) throw invalid(src, `the URL's repository "${repo}" does not match --repo "${opts.repo}"`);
}

function githubClone(owner: string, repo: string, ref: string | null, subdir: string): SkillSource {
  return { type: 'git', location: `https://github.com/${owner}/${repo}.git`, ref, subdir };
}

function isSkillMd(segment: string | undefined): boolean {
  return segment !== undefined && segment.toLowerCase() === 'skill.md';
}

/** GitHub web, raw and archive URLs (skills-mcp-tools.md §1.8, translated to git clones where possible). */
function parseGithubUrl(src: string, url: URL, opts: SourceOptions): SkillSource {
  const seg = splitSegments(url.pathname);
  const ref = opts.ref ?? null;
  if (url.hostname === 'raw.githubusercontent.com') {
    const [owner, repo, rawRef, ...rest] = seg;
    if (!owner || !repo || !rawRef || !isSkillMd(rest.at(-1))) throw invalid(src, 'a raw.githubusercontent.com URL must end with /OWNER/REPO/REF/…/SKILL.md');
    checkOwnerRepo(src, owner, repo, opts);
    return githubClone(owner, repo, ref ?? rawRef, checkSubdir(src, rest.slice(0, -1)));
  }
  if (GITHUB_ARCHIVE_HOSTS.has(url.hostname)) {
    const api = url.hostname === 'api.github.com';
    const [first, second, third, kind] = seg;
    const owner = api ? second : first;
    const repo = api ? third : second;
    const ok = api ? first === 'repos' && kind === 'zipball' : third === 'zip';
    if (!owner || !repo || !ok) throw invalid(src, `the ${url.hostname} URL is not a repository zip archive`);
    checkOwnerRepo(src, owner, repo, opts);
    return { type: 'url', location: url.href, filename: `${repo}.zip`, subdir: '' };
  }
  const [owner, repoRaw, kind, first, ...rest] = seg;
  if (!owner || !repoRaw) throw invalid(src, 'a GitHub URL must name OWNER/REPO');
  const repo = repoRaw.replace(/\.git$/, '');
  checkOwnerRepo(src, owner, repo, opts);
  if (kind === undefined) return githubClone(owner, repo, ref, '');
  if (kind === 'tree' && first) return githubClone(owner, repo, ref ?? first, checkSubdir(src, rest));
  if ((kind === 'blob' || kind === 'raw') && first) {
    if (!isSkillMd(rest.at(-1))) throw invalid(src, 'a GitHub file URL must point at a SKILL.md');
    return githubClone(owner, repo, ref ?? first, checkSubdir(src, rest.slice(0, -1)));
  }
  const last = seg.at(-1) ?? '';
  if ((kind === 'releases' && first === 'download') || kind === 'archive') {
    if (!last.toLowerCase().endsWith('.zip')) throw invalid(src, 'only .zip release assets and archives can be installed');
    return { type: 'url', location: url.href, filename: last, subdir: '' };
  }
  throw invalid(src, 'this GitHub URL is not a repository, a folder (tree/REF/DIR), a SKILL.md file or a .zip release asset');
}

function splitRef(src: string, opts: SourceOptions): { bare: string; ref: string | null } {
  const hash = src.indexOf('#');
  if (hash === -1) return { bare: src, ref: opts.ref ?? null };
  const fragment = src.slice(hash + 1);
  return { bare: src.slice(0, hash), ref: opts.ref ?? (fragment === '' ? null : fragment) };
}

function parseRemote(src: string, opts: SourceOptions): SkillSource {
  if (/^[\w.-]+@[\w.-]+:(?!\/\/)/.test(src)) {
    const { bare, ref } = splitRef(src, opts);
    return { type: 'git', location: bare, ref, subdir: '' };
  }
  const gitPlus = src.toLowerCase().startsWith('git+');
  const { bare, ref } = splitRef(gitPlus ? src.slice(4) : src, opts);
  let url: URL;
  try {
    url = new URL(bare);
  } catch {
    throw invalid(src, 'it is not a valid URL');
  }
  if (url.username !== '' || url.password !== '')
    throw invalid(src, 'URLs with credentials are refused (they would be stored in skills.lock.json)', 'use a git credential helper or an SSH remote instead');
  switch (url.protocol) {
    case 'file:':
      return { type: 'git', location: url.href, ref, subdir: '' };
    case 'ssh:':
    case 'git:':
      return { type: 'git', location: url.href, ref, subdir: '' };
    case 'http:':
      throw invalid(src, 'plain http is refused; use https');
    case 'https:':
      break;
    default:
      throw invalid(src, `the ${url.protocol} scheme is not supported`);
  }
  const github = url.hostname === 'github.com' || url.hostname === 'raw.githubusercontent.com' || GITHUB_ARCHIVE_HOSTS.has(url.hostname);
  if (github && !gitPlus) return parseGithubUrl(src, url, { ...opts, ref: ref ?? undefined });
  if (opts.owner !== undefined || opts.repo !== undefined) throw invalid(src, '--owner and --repo apply only to GitHub URLs');
  if (gitPlus || url.pathname.endsWith('.git')) return { type: 'git', location: url.href, ref, subdir: '' };
  throw invalid(
    src,
    `https downloads are accepted only from GitHub (github.com, raw.githubusercontent.com, codeload.github.com, api.github.com), not from ${url.hostname}`,
    'to clone another git host, write the remote as git+https://HOST/PATH or end it with .git',
  );
}

async function isBareRepo(dir: string): Promise<boolean> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.includes('HEAD') && names.includes('objects') && names.includes('refs');
}

/** Classifies SRC; local paths are resolved against `cwd`. Throws `skill.invalid_source` with the reason. */
export async function resolveSkillSource(src: string, opts: SourceOptions = {}, cwd = process.cwd()): Promise<SkillSource> {
  const trimmed = src.trim();
  if (trimmed === '') throw invalid(src, 'the source is empty');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) || /^[\w.-]+@[\w.-]+:(?!\/\/)/.test(trimmed)) return parseRemote(trimmed, opts);
  if (opts.owner !== undefined || opts.repo !== undefined) throw invalid(src, '--owner and --repo apply only to GitHub URLs');
  const abs = path.resolve(cwd, trimmed);
  let st;
  try {
    st = await stat(abs);
  } catch {
    throw invalid(src, `no such file or directory: ${abs}`);
  }
  if (st.isDirectory()) {
    if (await isBareRepo(abs)) return { type: 'git', location: abs, ref: opts.ref ?? null, subdir: '' };
    if (opts.ref !== undefined) throw invalid(src, '--ref applies only to git sources');
    return { type: 'directory', location: abs };
  }
  if (!st.isFile()) throw invalid(src, 'it is neither a regular file nor a directory');
  if (opts.ref !== undefined) throw invalid(src, '--ref applies only to git sources');
  if (path.basename(abs).toLowerCase() === 'skill.md') return { type: 'directory', location: path.dirname(abs) };
  return { type: 'zip', location: abs };
}

/** A short human label for a source (lock `source` field and messages). */
export function describeSource(source: SkillSource): string {
  if (source.type === 'git' && source.ref) return `${source.location}#${source.ref}`;
  return source.location;
}
