// Gets remote skill sources for core/skills: `git clone` with the system git, and GitHub archive downloads.
import { createWriteStream, type Dirent } from 'node:fs';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { LbotError } from '../../core/errors.js';
import type { DownloadRequest, GitCloneRequest, SkillFetcher } from '../../core/skills/fetcher.js';
import { LBOT_VERSION } from '../../package-root.js';
import { startInterval } from '../interval.js';

export const GIT_TIMEOUT_MS = 120_000;
export const DOWNLOAD_TIMEOUT_MS = 120_000;
/** How often a running clone's size is measured against its budget. */
const CLONE_WATCH_MS = 100;
/** What git may see of lbot's environment: the search path, the temp dir, proxies and the SSH agent. */
const PASS_ENV = ['PATH', 'TMPDIR', 'SSH_AUTH_SOCK', 'HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy', 'GIT_SSL_CAINFO'];

/**
 * Settings every git call starts from, so that nothing of the user's setup runs on an untrusted
 * repository: no hooks, no credential helpers, no LFS or other filter processes, no fsmonitor, no
 * `ext::` transport. (The global and system config files are not read at all; see gitEnv.)
 */
export const GIT_SAFE_CONFIG = [
  'core.hooksPath=/dev/null',
  'credential.helper=',
  'core.fsmonitor=false',
  'core.askPass=true',
  'filter.lfs.process=',
  'filter.lfs.smudge=',
  'filter.lfs.clean=',
  'filter.lfs.required=false',
  'protocol.ext.allow=never',
  'submodule.recurse=false',
  'advice.detachedHead=false',
].flatMap((kv) => ['-c', kv]);

/**
 * The fixed environment git runs with: an empty HOME and no global or system config (so no
 * `core.hooksPath`, `url.*.insteadOf`, credential helper or filter of the user applies), never
 * prompts, never waits on a dead SSH peer for long, and skips LFS downloads.
 */
function gitEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of PASS_ENV) {
    const v = process.env[key];
    if (v !== undefined) env[key] = v;
  }
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_LFS_SKIP_SMUDGE: '1',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'true',
    SSH_ASKPASS: 'true',
    GIT_SSH_COMMAND: 'ssh -o BatchMode=yes -o ConnectTimeout=15',
  };
}

/** Bytes under `dir` (apparent file sizes, symlinks not followed); stops counting once past `stopAt`. */
async function treeBytes(dir: string, stopAt: number): Promise<number> {
  let total = 0;
  const pending = [dir];
  while (pending.length > 0 && total <= stopAt) {
    const current = pending.pop();
    if (current === undefined) break;
    let names: Dirent[];
    try {
      names = await readdir(current, { withFileTypes: true });
    } catch {
      continue; // not there yet, or removed by git while we looked
    }
    for (const d of names) {
      const full = path.join(current, d.name);
      if (d.isDirectory()) {
        pending.push(full);
        continue;
      }
      try {
        total += (await lstat(full)).size;
      } catch {
        // a temp file git already renamed
      }
    }
  }
  return total;
}

/**
 * Measures a clone while git writes it and stops git (through `signal`) once `.git` or the whole
 * directory passes its budget. `check()` measures once more after git is done.
 */
class CloneBudget {
  readonly #controller = new AbortController();
  #timer: { close(): void } | null = null;
  exceeded: LbotError | null = null;

  constructor(private readonly req: GitCloneRequest) {}

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  start(): void {
    this.#timer = startInterval(
      CLONE_WATCH_MS,
      async () => {
        if (!this.exceeded) await this.check();
      },
      () => undefined,
    );
  }

  stop(): void {
    this.#timer?.close();
    this.#timer = null;
  }

  /** Throws (and aborts git) when the clone is over budget. */
  async check(): Promise<void> {
    if (!this.exceeded) {
      const { dest, maxGitBytes, maxTotalBytes, url } = this.req;
      const git = await treeBytes(path.join(dest, '.git'), maxGitBytes);
      const total = git > maxGitBytes ? 0 : await treeBytes(dest, maxTotalBytes);
      if (git > maxGitBytes) {
        this.exceeded = new LbotError('skill.too_large', `Archive exceeds max_archive_bytes (git history of ${url}: more than ${maxGitBytes} bytes)`, {
          details: { limit: 'max_archive_bytes', max: maxGitBytes, source: url },
        });
      } else if (total > maxTotalBytes) {
        this.exceeded = new LbotError(
          'skill.too_large',
          `Package exceeds max_uncompressed_bytes (clone of ${url}: more than ${maxTotalBytes} bytes with its history)`,
          { details: { limit: 'max_uncompressed_bytes', max: maxTotalBytes, source: url } },
        );
      }
      if (this.exceeded) this.#controller.abort();
    }
    if (this.exceeded) throw this.exceeded;
  }
}

function lastLines(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('Cloning into') && !l.startsWith('warning: --depth is ignored'));
  return lines.slice(-3).join(' / ') || 'git failed without a message';
}

type GitRun = { url: string; home: string; budget: CloneBudget; signal?: AbortSignal | undefined };

async function git(args: string[], req: GitRun): Promise<string> {
  const deadline = AbortSignal.timeout(GIT_TIMEOUT_MS);
  const signal = AbortSignal.any([...(req.signal ? [req.signal] : []), deadline, req.budget.signal]);
  // An ES-only package, imported where it is used: the CLI's bundle is CommonJS (src/cli-loader.ts).
  const { execa } = await import('execa');
  const result = await execa('git', [...GIT_SAFE_CONFIG, ...args], {
    env: gitEnv(req.home),
    extendEnv: false,
    cancelSignal: signal,
    forceKillAfterDelay: 2_000,
    stdin: 'ignore',
    reject: false,
  });
  if (req.budget.exceeded) throw req.budget.exceeded;
  if (result.exitCode === 0 && !result.isCanceled) return result.stdout.trim();
  if (req.signal?.aborted) throw new LbotError('cancelled', 'skill install was interrupted; nothing was installed');
  if (deadline.aborted) {
    throw new LbotError('skill.invalid_source', `git gave up on ${req.url} after ${GIT_TIMEOUT_MS / 1000} s`, {
      details: { source: req.url },
      hint: 'check the network and the remote URL',
    });
  }
  if (result.failed && result.exitCode === undefined) {
    throw new LbotError('skill.invalid_source', `cannot run git to fetch ${req.url}: ${result.shortMessage}`, {
      details: { source: req.url },
      hint: 'install git, or download the skill and install it from its folder or a .zip',
    });
  }
  throw new LbotError('skill.invalid_source', `cannot fetch ${req.url} with git: ${lastLines(result.stderr)}`, {
    details: { source: req.url, exit_code: result.exitCode },
    hint: 'check that the remote exists and is reachable, and that the ref names a branch, tag or commit',
  });
}

async function gitClone(req: GitCloneRequest): Promise<{ commit: string }> {
  const isCommit = req.ref !== null && /^[0-9a-f]{7,40}$/i.test(req.ref);
  // The clone's own config gets the safe settings too, so later git calls in it stay hook-free.
  const base = ['clone', '--quiet', '--no-recurse-submodules', '--template=', '--config', 'core.hooksPath=/dev/null'];
  const home = await mkdtemp(path.join(os.tmpdir(), 'lbot-git-home-'));
  const budget = new CloneBudget(req);
  const run: GitRun = { url: req.url, home, budget, signal: req.signal };
  const dest = path.resolve(req.dest);
  budget.start();
  try {
    if (isCommit && req.ref !== null) {
      await git([...base, '--no-checkout', '--', req.url, dest], run);
      await budget.check();
      await git(['-C', dest, 'checkout', '--quiet', '--detach', req.ref], run);
    } else {
      const branch = req.ref === null ? [] : ['--branch', req.ref];
      await git([...base, '--depth', '1', '--single-branch', '--no-tags', ...branch, '--', req.url, dest], run);
    }
    await budget.check();
    return { commit: await git(['-C', dest, 'rev-parse', 'HEAD'], run) };
  } catch (err) {
    await rm(dest, { recursive: true, force: true });
    throw err;
  } finally {
    budget.stop();
    await rm(home, { recursive: true, force: true });
  }
}

/** Counts downloaded bytes and stops the download once it passes `max`. */
class DownloadBudget extends Transform {
  #seen = 0;
  constructor(
    private readonly max: number,
    private readonly url: string,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.#seen += chunk.length;
    if (this.#seen > this.max) {
      return done(
        new LbotError('skill.too_large', `Archive exceeds max_archive_bytes (download of ${this.url}: more than ${this.max} bytes)`, {
          details: { limit: 'max_archive_bytes', max: this.max },
        }),
      );
    }
    done(null, chunk);
  }
}

async function download(req: DownloadRequest): Promise<void> {
  const deadline = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS);
  const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
  const headers: Record<string, string> = { 'User-Agent': `lbot/${LBOT_VERSION}`, Accept: 'application/octet-stream, application/zip, */*' };
  const token = process.env.GITHUB_TOKEN;
  if (token) headers.Authorization = `Bearer ${token}`;
  try {
    const res = await fetch(req.url, { redirect: 'follow', signal, headers });
    if (!res.ok || !res.body)
      throw new LbotError('skill.invalid_source', `cannot download ${req.url}: HTTP ${res.status}`, { details: { source: req.url, status: res.status } });
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > req.maxBytes) {
      throw new LbotError('skill.too_large', `Archive exceeds max_archive_bytes (${req.url}: ${declared} > ${req.maxBytes})`, {
        details: { limit: 'max_archive_bytes', value: declared, max: req.maxBytes },
      });
    }
    await pipeline(Readable.fromWeb(res.body), new DownloadBudget(req.maxBytes, req.url), createWriteStream(req.dest, { flags: 'wx' }));
  } catch (err) {
    await rm(req.dest, { force: true });
    if (err instanceof LbotError) throw err;
    if (req.signal?.aborted) throw new LbotError('cancelled', 'skill install was interrupted; nothing was installed');
    const why = deadline.aborted ? `no answer within ${DOWNLOAD_TIMEOUT_MS / 1000} s` : err instanceof Error ? err.message : String(err);
    throw new LbotError('skill.invalid_source', `cannot download ${req.url}: ${why}`, { details: { source: req.url }, cause: err });
  }
}

/** The production SkillFetcher. */
export function createSkillFetcher(): SkillFetcher {
  return { gitClone, download };
}
