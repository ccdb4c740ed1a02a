// Gets remote skill sources for core/skills: `git clone` with the system git, and GitHub archive downloads.
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { execa } from 'execa';
import { LbotError } from '../../core/errors.js';
import type { DownloadRequest, GitCloneRequest, SkillFetcher } from '../../core/skills/fetcher.js';
import { LBOT_VERSION } from '../../version.js';

export const GIT_TIMEOUT_MS = 120_000;
export const DOWNLOAD_TIMEOUT_MS = 120_000;
const PASS_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'TMPDIR', 'SSH_AUTH_SOCK', 'HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy', 'GIT_SSL_CAINFO'];

/** The allowlisted environment git runs with: never prompts, never waits on a dead SSH peer for long. */
function gitEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of PASS_ENV) {
    const v = process.env[key];
    if (v !== undefined) env[key] = v;
  }
  return {
    ...env,
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'true',
    SSH_ASKPASS: 'true',
    GIT_SSH_COMMAND: 'ssh -o BatchMode=yes -o ConnectTimeout=15',
  };
}

function lastLines(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('Cloning into') && !l.startsWith('warning: --depth is ignored'));
  return lines.slice(-3).join(' / ') || 'git failed without a message';
}

async function git(args: string[], req: { url: string; signal?: AbortSignal | undefined }): Promise<string> {
  const deadline = AbortSignal.timeout(GIT_TIMEOUT_MS);
  const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
  const result = await execa('git', args, { env: gitEnv(), extendEnv: false, cancelSignal: signal, forceKillAfterDelay: 2_000, stdin: 'ignore', reject: false });
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
  const base = ['-c', 'advice.detachedHead=false', 'clone', '--quiet', '--no-recurse-submodules'];
  if (isCommit && req.ref !== null) {
    await git([...base, '--no-checkout', '--', req.url, req.dest], req);
    await git(['-C', req.dest, '-c', 'advice.detachedHead=false', 'checkout', '--quiet', '--detach', req.ref], req);
  } else {
    const branch = req.ref === null ? [] : ['--branch', req.ref];
    await git([...base, '--depth', '1', '--single-branch', '--no-tags', ...branch, '--', req.url, req.dest], req);
  }
  return { commit: await git(['-C', req.dest, 'rev-parse', 'HEAD'], req) };
}

/** Counts downloaded bytes and stops the download once it passes `max`. */
class DownloadBudget extends Transform {
  #seen = 0;
  constructor(private readonly max: number, private readonly url: string) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.#seen += chunk.length;
    if (this.#seen > this.max) {
      return done(new LbotError('skill.too_large', `Archive exceeds max_archive_bytes (download of ${this.url}: more than ${this.max} bytes)`, { details: { limit: 'max_archive_bytes', max: this.max } }));
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
    if (!res.ok || !res.body) throw new LbotError('skill.invalid_source', `cannot download ${req.url}: HTTP ${res.status}`, { details: { source: req.url, status: res.status } });
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > req.maxBytes) {
      throw new LbotError('skill.too_large', `Archive exceeds max_archive_bytes (${req.url}: ${declared} > ${req.maxBytes})`, { details: { limit: 'max_archive_bytes', value: declared, max: req.maxBytes } });
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
