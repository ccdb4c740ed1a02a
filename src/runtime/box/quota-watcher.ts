// Entry point of a session's quota watcher: a detached process that measures the session's workspace
// every interval for as long as the session's sandbox lives, and stops every process of the session
// once usage passes the quota plus margin, or once part of the workspace cannot be measured.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { quotaExceeded, quotaUnreadable, measureUsage, unmeasurablePath } from '../../core/box/quota.js';
import { tryParseJson } from '../../core/json.js';
import type { LbotError } from '../../core/errors.js';
import { ErrorLog } from './error-log.js';
import { readJson, writeJsonAtomic } from './files.js';
import { isIdentityAlive } from '../process/identity.js';
import { signalPid } from '../process/group.js';
import { QUOTA_WATCH_ENV, QuotaWatchConfigSchema, commandRunning, quotaStopError, type QuotaStop, type QuotaWatchConfig } from './quota-watch.js';
import type { QuotaWatchPlan } from './backend.js';

const RecordRefSchema = z.object({ info: z.object({ backend_session_id: z.string() }) });

function log(message: string): void {
  process.stderr.write(`${new Date().toISOString()} ${message}\n`);
}

/** Whether the session this watcher belongs to still exists with the same sandbox. */
function sessionLives(cfg: QuotaWatchConfig): boolean {
  const record = readJson(cfg.record_file, RecordRefSchema);
  if (!record || record.info.backend_session_id !== cfg.backend_session_id) return false;
  const stop = cfg.plan.stop;
  return stop.kind !== 'pidns' || isIdentityAlive(stop.init);
}

async function measure(plan: QuotaWatchPlan): Promise<number> {
  let used = 0;
  for (const p of plan.statfs) {
    const st = await statfs(p);
    used += (st.blocks - st.bfree) * st.bsize;
  }
  return used + (await measureUsage(plan.dirs));
}

/** Pids whose environment holds `name=value` (this process excluded). */
function markedPids(name: string, value: string): number[] {
  const needle = `${name}=${value}`;
  const out: number[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${e}/environ`, 'latin1').split('\0').includes(needle)) out.push(Number(e));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/** Stops every process of the session. */
function stopSession(plan: QuotaWatchPlan): void {
  const stop = plan.stop;
  if (stop.kind === 'pidns') {
    // The PID namespace's init takes every process of the sandbox with it.
    if (isIdentityAlive(stop.init)) signalPid(stop.init.pid, 'SIGKILL');
  } else if (stop.kind === 'env_marker') {
    // Freeze first so nothing forks away between scans, then kill all of them.
    const seen = new Set<number>();
    for (let pass = 0; pass < 20; pass++) {
      const fresh = markedPids(stop.name, stop.value).filter((p) => !seen.has(p));
      if (fresh.length === 0) break;
      for (const p of fresh) {
        seen.add(p);
        signalPid(p, 'SIGSTOP');
      }
    }
    for (const p of seen) signalPid(p, 'SIGKILL');
  } else {
    const [cmd, ...args] = stop.argv;
    if (cmd) spawnSync(cmd, args, { stdio: 'ignore', timeout: 20_000 });
  }
}

async function breach(cfg: QuotaWatchConfig, err: LbotError): Promise<void> {
  const record: QuotaStop = {
    session_id: cfg.session_id,
    backend_session_id: cfg.backend_session_id,
    stopped_at: new Date().toISOString(),
    code: 'box.quota_exceeded',
    message: `${err.message}; the session's processes were stopped`,
    hint: err.hint ?? null,
    details: err.details,
  };
  writeJsonAtomic(cfg.stop_file, record);
  stopSession(cfg.plan);
  log(`stopped session ${cfg.session_id}: ${err.message}`);
  await new ErrorLog(cfg.errors_file, cfg.errors_lock).record(quotaStopError(record), null);
}

async function main(): Promise<void> {
  const cfg = QuotaWatchConfigSchema.parse(tryParseJson(process.env[QUOTA_WATCH_ENV] ?? ''));
  delete process.env[QUOTA_WATCH_ENV];
  process.stdout.write('ready\n');
  for (;;) {
    if (!sessionLives(cfg)) return;
    const started = Date.now();
    let failure: LbotError | null = null;
    try {
      const used = await measure(cfg.plan);
      // Between commands the quota itself holds; while one runs, it may pass it by the margin (the after-check judges it).
      const threshold = commandRunning(cfg.commands_dir) ? cfg.threshold_bytes : cfg.limit_bytes;
      if (used > threshold) failure = quotaExceeded('background', used, cfg.limit_bytes, cfg.where, cfg.session_id);
    } catch (err) {
      if (unmeasurablePath(err) !== null) failure = quotaUnreadable('background', err, cfg.limit_bytes, cfg.where, cfg.session_id);
      // Anything else (the sandbox ending while measured) is looked at again on the next round.
    }
    if (failure && sessionLives(cfg)) {
      await breach(cfg, failure);
      return;
    }
    const took = Date.now() - started;
    await sleep(Math.max(cfg.interval_ms, took * cfg.backoff));
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(`quota watcher failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
