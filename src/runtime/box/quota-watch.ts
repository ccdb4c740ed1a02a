// The workspace-quota watcher of a session, service side: its config (shared with the watcher entry),
// starting it once per session sandbox, stopping it with the session, and the stop record it leaves.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { entryCommand } from '../../package-root.js';
import { z } from 'zod';
import { LbotError } from '../../core/errors.js';
import { readJson, writeJsonAtomic } from './files.js';
import { withLock } from './lock.js';
import { identityOf, isIdentityAlive } from '../process/identity.js';
import { childEnv } from '../process/env.js';
import { signalPid } from '../process/group.js';
import { QuotaWatchPlanSchema, type QuotaWatchPlan, type SessionRecord } from './backend.js';
import type { BoxLayout } from './layout.js';

/** Env var carrying the watcher's config (JSON). */
export const QUOTA_WATCH_ENV = 'LBOT_BOX_QUOTA_WATCH';
/** The watcher measures at most this often; after a slow walk it waits `WALK_BACKOFF` times the walk's duration. */
export const QUOTA_WATCH_INTERVAL_MS = 250;
export const WALK_BACKOFF = 4;
const START_TIMEOUT_MS = 10_000;

export const QuotaWatchConfigSchema = z.strictObject({
  session_id: z.string(),
  backend_session_id: z.string(),
  /** The watcher ends once this record is gone or names another sandbox. */
  record_file: z.string(),
  stop_file: z.string(),
  errors_file: z.string(),
  errors_lock: z.string(),
  quota_mb: z.number().int().positive(),
  limit_bytes: z.number().int().positive(),
  /** Usage above this stops the session while a command runs in it: the quota plus the margin a running command may use. */
  threshold_bytes: z.number().int().positive(),
  /** Commands in flight mark themselves here (see markCommand); without one, usage above the quota itself stops the session. */
  commands_dir: z.string(),
  interval_ms: z.number().int().positive(),
  backoff: z.number().positive(),
  where: z.string(),
  plan: QuotaWatchPlanSchema,
});
export type QuotaWatchConfig = z.infer<typeof QuotaWatchConfigSchema>;

const IdentitySchema = z.strictObject({ pid: z.number().int(), start: z.string(), boot: z.string() });
const WatcherFileSchema = z.strictObject({ watcher: IdentitySchema, backend_session_id: z.string() });

/** What a watcher leaves when it stopped a session: the error the next exec of that id reports. */
export const QuotaStopSchema = z.strictObject({
  session_id: z.string(),
  backend_session_id: z.string(),
  stopped_at: z.string(),
  code: z.literal('box.quota_exceeded'),
  message: z.string(),
  hint: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
});
export type QuotaStop = z.infer<typeof QuotaStopSchema>;

const stopsDir = (layout: BoxLayout) => path.join(layout.root, 'quota-stops');
/** Outside the session dir: the reaper removes a stopped (dead) session before its next exec asks. */
export const quotaStopFile = (layout: BoxLayout, sid: string) => path.join(stopsDir(layout), `${sid}.json`);
const watcherFile = (layout: BoxLayout, sid: string) => path.join(layout.sessionDir(sid), 'quota-watcher.json');
const watcherLock = (layout: BoxLayout, sid: string) => path.join(layout.locksDir, `${sid}.quota.lock`);
const commandsDir = (layout: BoxLayout, sid: string) => path.join(layout.sessionDir(sid), 'commands');

export const CommandMarkSchema = z.strictObject({ owner: IdentitySchema });

/**
 * Marks a command as running in the session for as long as it runs (the marker names this process, so
 * one left by a killed CLI does not count). Returns the function that removes the mark.
 */
export function markCommand(layout: BoxLayout, sid: string): () => void {
  const owner = identityOf(process.pid);
  if (!owner) return () => undefined;
  const file = path.join(commandsDir(layout, sid), `${process.pid}-${randomBytes(4).toString('hex')}.json`);
  writeJsonAtomic(file, { owner });
  return () => rmSync(file, { force: true });
}

/** Whether a command runs in the session right now (a mark whose process is alive). */
export function commandRunning(dir: string): boolean {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return false;
  }
  return names.some((n) => {
    const mark = n.endsWith('.json') ? readJson(path.join(dir, n), CommandMarkSchema) : null;
    return mark !== null && isIdentityAlive(mark.owner);
  });
}

function watcherRunning(layout: BoxLayout, record: SessionRecord): boolean {
  const w = readJson(watcherFile(layout, record.info.session_id), WatcherFileSchema);
  return w !== null && w.backend_session_id === record.info.backend_session_id && isIdentityAlive(w.watcher);
}

export type QuotaWatchOptions = { limitBytes: number; thresholdBytes: number; where: string; errorsFile: string; errorsLock: string };

/**
 * Makes sure the session's sandbox has its quota watcher: a detached process that outlives the CLI and
 * lives as long as the sandbox (or until the session is dropped). Single-flight per session.
 */
export async function ensureQuotaWatcher(layout: BoxLayout, record: SessionRecord, plan: QuotaWatchPlan, opts: QuotaWatchOptions): Promise<void> {
  if (watcherRunning(layout, record)) return;
  const sid = record.info.session_id;
  await withLock(watcherLock(layout, sid), async () => {
    if (watcherRunning(layout, record)) return;
    const cfg: QuotaWatchConfig = {
      session_id: sid,
      backend_session_id: record.info.backend_session_id,
      record_file: layout.recordFile(sid),
      stop_file: quotaStopFile(layout, sid),
      errors_file: opts.errorsFile,
      errors_lock: opts.errorsLock,
      quota_mb: record.info.workspace_quota_mb,
      limit_bytes: opts.limitBytes,
      threshold_bytes: opts.thresholdBytes,
      commands_dir: commandsDir(layout, sid),
      interval_ms: QUOTA_WATCH_INTERVAL_MS,
      backoff: WALK_BACKOFF,
      where: opts.where,
      plan,
    };
    const pid = await spawnWatcher(cfg, path.join(layout.sessionDir(sid), 'quota-watcher.log'));
    const watcher = identityOf(pid);
    if (!watcher) throw new LbotError('internal', `the quota watcher of box session ${sid} exited right after starting; the command is not run`);
    writeJsonAtomic(watcherFile(layout, sid), { watcher, backend_session_id: record.info.backend_session_id });
  });
}

function spawnWatcher(cfg: QuotaWatchConfig, logFile: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const [cmd, ...args] = entryCommand('runtime/box/quota-watcher');
    const logFd = openSync(logFile, 'a', 0o600);
    const child = spawn(cmd ?? process.execPath, args, {
      detached: true,
      stdio: ['ignore', 'pipe', logFd],
      env: childEnv('helper', { [QUOTA_WATCH_ENV]: JSON.stringify(cfg) }),
    });
    closeSync(logFd);
    let out = '';
    let done = false;
    const finish = (err: Error | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.stdout?.destroy();
      child.unref();
      if (err) reject(err);
      else if (child.pid) resolve(child.pid);
      else reject(new Error('no pid'));
    };
    const fail = (why: string) =>
      finish(new LbotError('internal', `the quota watcher of box session ${cfg.session_id} did not start (${why}); the command is not run`));
    const timer = setTimeout(() => {
      if (child.pid) signalPid(child.pid, 'SIGKILL');
      fail(`no answer within ${START_TIMEOUT_MS} ms`);
    }, START_TIMEOUT_MS);
    child.on('error', (err) => fail(err.message));
    child.on('exit', (code) => fail(`it exited with code ${code}`));
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      if (out.includes('ready\n')) finish(null);
    });
  });
}

/** Ends the session's watcher (the session is going away). */
export function stopQuotaWatcher(layout: BoxLayout, sid: string): void {
  const w = readJson(watcherFile(layout, sid), WatcherFileSchema);
  if (w && isIdentityAlive(w.watcher)) signalPid(w.watcher.pid, 'SIGKILL');
}

/** The error of a stop record. */
export function quotaStopError(stop: QuotaStop): LbotError {
  return new LbotError(stop.code, stop.message, { details: { ...stop.details, stopped_at: stop.stopped_at }, ...(stop.hint ? { hint: stop.hint } : {}) });
}

/** Reads and removes the stop record of a session id: it is reported once, by the next command on that id. */
export function takeQuotaStop(layout: BoxLayout, sid: string): LbotError | null {
  const file = quotaStopFile(layout, sid);
  const stop = readJson(file, QuotaStopSchema);
  rmSync(file, { force: true });
  return stop ? quotaStopError(stop) : null;
}

/** Stop records not reported yet (for `box status`). */
export function pendingQuotaStops(layout: BoxLayout): QuotaStop[] {
  let names: string[];
  try {
    names = readdirSync(stopsDir(layout));
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith('.json'))
    .map((n) => readJson(path.join(stopsDir(layout), n), QuotaStopSchema))
    .filter((s): s is QuotaStop => s !== null)
    .sort((a, b) => a.stopped_at.localeCompare(b.stopped_at));
}

/** Forgets a stop record (the session id was removed with `lbot box rm`). */
export function clearQuotaStop(layout: BoxLayout, sid: string): void {
  rmSync(quotaStopFile(layout, sid), { force: true });
}
