// The box service: spec building, mount policy, quota, sessions, exec, managed processes, status, reaping.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BoxConfig } from '../../core/config.js';
import { boxError, validationError } from '../../core/box/errors.js';
import { createMountPolicy, type MountPolicy } from '../../core/box/mounts.js';
import { assertSessionId } from '../../core/box/session-id.js';
import { toolResult } from './exec-result.js';
import { effectiveSpec } from './effective-spec.js';
import { boxStatus } from './box-status.js';
import { parseProcessRequest, type ProcessRequest } from './process-request.js';
import { startInterval } from '../interval.js';
import { type BackendName, type BoxSpec, type BoxStatus, type ErrorRecord, type ManagedProcessInfo, type ManagedProcessSpec } from '../../core/box/model.js';
import { toLbotError } from '../../core/errors.js';
import { assertSafeEnv } from '../../core/env-policy.js';
import { attachToSocket, type Attachment } from './attach-client.js';
import { ErrorLog } from './error-log.js';
import { BoxLayout } from './layout.js';
import { withLock } from './lock.js';
import { identityOf } from '../process/identity.js';
import { ProcessManager } from './processes.js';
import { createBackends, selectBackend, type BackendSet } from './select.js';
import { SessionStore, backendConflict } from './sessions.js';
import { clearQuotaStop, markCommand, stopQuotaWatcher, takeQuotaStop } from './quota-watch.js';
import { checkQuotaAfter, checkQuotaBefore, quotaStopsField, quotaWatchdog, watchSessionQuota } from './exec-quota.js';
import type { Owner, SandboxBackend, SessionRecord } from './backend.js';
import type { BoxServiceOptions, ExecInput, ExecOptions, ExecOutput, RawExecOutput, SessionView } from './service-types.js';

export type { BoxServiceOptions, ExecInput, ExecOptions, ExecOutput, RawExecOutput, SessionView } from './service-types.js';

const INTERNAL_CAPTURE_BYTES = 16 * 1024 * 1024;
/** How long a command waits for the one before it in the same session. */
const EXEC_LOCK_WAIT_MS = 60 * 60_000;
const HOST_WARNING = 'the host backend runs commands directly on this machine, without any isolation';

export class BoxService {
  readonly layout: BoxLayout;
  readonly config: BoxConfig;
  readonly #backends: BackendSet;
  readonly #override: BackendName | null;
  readonly #warn: (message: string) => void;
  readonly #store: SessionStore;
  readonly #procs: ProcessManager;
  readonly #errors: ErrorLog;
  readonly #owner: Owner;
  #policy: MountPolicy | undefined;

  constructor(opts: BoxServiceOptions) {
    this.layout = new BoxLayout(path.resolve(opts.dataDir));
    this.config = opts.config;
    this.#backends = { ...createBackends(this.layout, opts.config, opts.warn ? { warn: opts.warn } : {}), ...opts.backends };
    this.#override = opts.backend ?? null;
    this.#warn = opts.warn ?? (() => undefined);
    const me = identityOf(process.pid);
    this.#owner = opts.owner === 'serve' && me ? { kind: 'serve', ...me } : { kind: 'cli' };
    this.#procs = new ProcessManager(this.layout, {
      perSession: opts.config.limits.max_managed_processes_per_session,
      total: opts.config.limits.max_managed_processes,
    });
    this.#store = new SessionStore({
      layout: this.layout,
      backend: (name) => this.#backends[name],
      ttlSec: opts.config.session_ttl_sec,
      maxSessions: opts.config.max_sessions,
      owner: this.#owner,
      beforeDrop: async (record) => {
        stopQuotaWatcher(this.layout, record.info.session_id);
        await this.#procs.stopAll(record.info.session_id);
      },
      hasRunningProcesses: (sid) => this.#procs.hasRunning(sid),
      warn: this.#warn,
    });
    this.#errors = new ErrorLog(this.layout.errorsFile, path.join(this.layout.locksDir, 'errors.lock'));
  }

  /** The host-mount policy, built once (warnings for ignored allowlist roots are printed then). */
  get policy(): MountPolicy {
    this.#policy ??= createMountPolicy(this.config.allowed_mount_roots, {
      home: os.homedir(),
      protectedPaths: [this.layout.dataDir],
      skillsRoot: path.join(this.layout.dataDir, 'skills'),
      warn: this.#warn,
    });
    return this.#policy;
  }

  /** Builds and checks the effective spec of a request (profile merge, validation, mount policy). */
  buildSpec(input: ExecInput, sessionId: string): BoxSpec {
    return effectiveSpec(input, sessionId, this.config, this.policy, this.layout);
  }

  async #select(): Promise<SandboxBackend> {
    const { backend } = await selectBackend(this.#backends, this.config, this.#override);
    if (backend.name === 'host') this.#warn(HOST_WARNING);
    return backend;
  }

  #backendOf(record: SessionRecord): SandboxBackend {
    return this.#backends[record.info.backend_name];
  }

  /**
   * An existing session is reused only on the backend this request asks for (`--backend`, else
   * box.backend): `auto` accepts any isolating backend, a name only itself. So a session made with
   * `--backend host` never serves a request that did not name host.
   */
  #assertBackend(record: SessionRecord): void {
    const requested = this.#override ?? this.config.backend;
    const stored = record.info.backend_name;
    if (requested === 'auto' ? stored !== 'host' : stored === requested) return;
    throw backendConflict(record.info.session_id, stored, requested);
  }

  /** A quota stop the session's watcher recorded is reported by the next command on that id (the session is removed). */
  async #reportQuotaStop(sid: string): Promise<void> {
    const stopped = takeQuotaStop(this.layout, sid);
    if (!stopped) return;
    await this.#store.drop(sid);
    throw stopped;
  }

  #ensureEnabled(): void {
    if (!this.config.enabled) {
      throw boxError(
        'box.unavailable',
        'box is disabled in config (box.enabled = false)',
        { reason: 'disabled' },
        'set box.enabled to true in lbot.config.json (or unset LBOT__BOX__ENABLED)',
      );
    }
  }

  /**
   * Runs one command in a session (get-or-create), enforcing the quota before, during and after.
   * Without a session id the command gets a fresh session that is removed afterwards.
   */
  async run(input: ExecInput, opts: ExecOptions = {}): Promise<RawExecOutput> {
    this.#ensureEnabled();
    const oneShot = !input.session_id;
    const sid = input.session_id ? assertSessionId(input.session_id) : `exec-${randomBytes(6).toString('hex')}`;
    if (oneShot) return this.#run(input, opts, sid, true);
    // One command at a time in a session, across lbot processes (box.md §5.1); sessions stay parallel.
    return withLock(this.layout.execLock(sid), () => this.#run(input, opts, sid, false), { timeoutMs: EXEC_LOCK_WAIT_MS, what: `box session ${sid}` });
  }

  async #run(input: ExecInput, opts: ExecOptions, sid: string, oneShot: boolean): Promise<RawExecOutput> {
    let created = false;
    let unmark = (): void => undefined;
    try {
      if (!oneShot) await this.#reportQuotaStop(sid);
      const spec = this.buildSpec(input, sid);
      if (!spec.cmd.trim()) throw validationError('cmd must not be empty', { field: 'cmd' });
      const stored = this.#store.read(sid);
      const existing = stored && (await this.#store.isAlive(stored)) ? stored : null;
      if (existing) this.#assertBackend(existing);
      const backend = existing ? this.#backendOf(existing) : await this.#select();
      if (existing && backend.name === 'host') this.#warn(HOST_WARNING);
      await checkQuotaBefore(spec, backend, existing);
      const got = await this.#store.getOrCreate(spec, backend, { oneShot, known: existing });
      created = got.created;
      const record = got.record;
      if (!oneShot && (await watchSessionQuota(this.layout, record, backend))) unmark = markCommand(this.layout, sid);
      const outcome = await backend.exec(record, {
        cmd: spec.cmd,
        workdir: spec.workdir,
        env: spec.env,
        timeoutMs: spec.timeout_sec * 1000,
        captureBytes: opts.internal ? INTERNAL_CAPTURE_BYTES : Math.max(1024 * 1024, this.config.output_limit_chars * 4),
        ...(opts.internal ? { internal: true } : {}),
        ...(opts.stdin ? { stdin: opts.stdin } : {}),
        ...(opts.sinks ? { sinks: opts.sinks } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...quotaWatchdog(spec, backend, record),
      });
      this.#store.touch(sid);
      if (!oneShot) await this.#reportQuotaStop(sid);
      if (outcome.status === 'timed_out') {
        await this.#store.drop(sid);
      } else {
        // This command reports the breach, so a stop the watcher recorded for it meanwhile is not reported again.
        await checkQuotaAfter(spec, backend, record, async () => {
          await this.#store.drop(sid);
          clearQuotaStop(this.layout, sid);
        });
      }
      if (outcome.watchdog_note !== null) outcome.stderr.push(Buffer.from(`\n${outcome.watchdog_note}\n`));
      return { outcome, spec, backend: backend.name };
    } catch (err) {
      const e = toLbotError(err);
      if (!opts.internal && e.code !== 'box.unavailable') await this.#errors.record(e, input.query_id ?? null);
      throw e;
    } finally {
      unmark();
      if (oneShot && (created || this.#store.read(sid))) await this.#store.drop(sid);
    }
  }

  /** `run` plus tool-output truncation (box.md §7.4): what `lbot box exec --json` and the exec tool return. */
  async exec(input: ExecInput, opts: ExecOptions = {}): Promise<ExecOutput> {
    const { outcome, spec, backend } = await this.run(input, opts);
    return { result: toolResult(outcome, spec, backend, this.config.output_limit_chars), effective_spec: spec };
  }

  /** All sessions with their last use, liveness and managed-process count. */
  async sessions(): Promise<SessionView[]> {
    const out: SessionView[] = [];
    for (const record of this.#store.list()) out.push(await this.#view(record, this.#procs.running(record.info.session_id).length));
    return out.sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /** One session with its managed processes; unknown id → box.session_not_found. */
  async session(id: string): Promise<SessionView & { processes: ManagedProcessInfo[] }> {
    const record = this.#requireSession(id);
    const processes = this.#procs
      .ids(id)
      .map((p) => this.#procs.readState(id, p))
      .filter((s) => s !== null)
      .map((s) => this.#procs.info(s));
    return { ...(await this.#view(record, processes.filter((p) => p.status === 'running').length)), processes };
  }

  async #view(record: SessionRecord, running: number): Promise<SessionView> {
    const info = this.#store.info(record);
    return { ...info, backend: info.backend_name, alive: await this.#store.isAlive(record), managed_processes: running, one_shot: record.one_shot };
  }

  #requireSession(id: string): SessionRecord {
    const record = this.#store.read(assertSessionId(id));
    if (!record) throw boxError('box.session_not_found', `box session ${id} not found; lbot box sessions lists the sessions`, { session_id: id });
    return record;
  }

  /** Removes a session and everything in it (`lbot box rm`). */
  async removeSession(id: string): Promise<void> {
    const sid = assertSessionId(id);
    try {
      await this.#store.remove(sid);
    } catch (err) {
      // An id whose session a quota stop removed is still known until its stop is reported.
      if (!(toLbotError(err).code === 'box.session_not_found' && takeQuotaStop(this.layout, sid))) throw err;
    }
    clearQuotaStop(this.layout, sid);
  }

  errors(): ErrorRecord[] {
    return this.#errors.list();
  }

  /** Availability, backend, counts (box.md §10.3); never throws. */
  async status(): Promise<BoxStatus> {
    const records = this.#store.list();
    return boxStatus({
      config: this.config,
      override: this.#override,
      backends: this.#backends,
      counts: {
        active_sessions: records.length,
        managed_processes: records.reduce((n, r) => n + this.#procs.running(r.info.session_id).length, 0),
        recent_error_count: this.errors().length,
        ...quotaStopsField(this.layout),
      },
    });
  }

  /** Probes every backend (for `lbot doctor`). */
  async probeAll(): Promise<Array<{ name: BackendName; available: boolean; reason: string; limits_mode?: string }>> {
    const names: BackendName[] = ['bwrap', 'docker', 'podman', 'host'];
    return Promise.all(names.map(async (name) => ({ name, ...(await this.#backends[name].probe()) })));
  }

  // ---- managed processes ----

  /** Starts a managed process (creating the session with the default spec when it does not exist). */
  async startProcess(sessionId: string, raw: ProcessRequest, opts: { replace?: boolean } = {}): Promise<ManagedProcessInfo> {
    this.#ensureEnabled();
    const sid = assertSessionId(sessionId);
    const spec = parseProcessRequest(raw);
    try {
      assertSafeEnv(spec.env, `managed process ${spec.process_id} env`);
    } catch (err) {
      await this.#errors.record(err, null);
      throw err;
    }
    return withLock(this.layout.execLock(sid), () => this.#startProcess(sid, spec, opts), { timeoutMs: EXEC_LOCK_WAIT_MS, what: `box session ${sid}` });
  }

  async #startProcess(sid: string, spec: ManagedProcessSpec, opts: { replace?: boolean }): Promise<ManagedProcessInfo> {
    await this.#reportQuotaStop(sid);
    let record = this.#store.read(sid);
    if (!record || !(await this.#store.isAlive(record))) {
      const spec = this.buildSpec({ cmd: 'true' }, sid);
      record = (await this.#store.getOrCreate(spec, await this.#select())).record;
    } else this.#assertBackend(record);
    const rec = record;
    await watchSessionQuota(this.layout, rec, this.#backendOf(rec));
    return withLock(this.layout.sessionLock(sid), () =>
      this.#procs.start(rec, this.#backendOf(rec), spec, {
        ...(opts.replace ? { replace: true } : {}),
        countAll: () => this.#store.ids().reduce((n, id) => n + this.#procs.running(id).length, 0),
      }),
    );
  }

  async stopProcess(sessionId: string, processId: string): Promise<void> {
    const record = this.#requireSession(sessionId);
    const sid = record.info.session_id;
    await withLock(this.layout.execLock(sid), () => withLock(this.layout.sessionLock(sid), () => this.#procs.stop(sid, processId)), {
      timeoutMs: EXEC_LOCK_WAIT_MS,
      what: `box session ${sid}`,
    });
  }

  processStatus(sessionId: string, processId: string): ManagedProcessInfo {
    const record = this.#requireSession(sessionId);
    return this.#procs.info(this.#procs.get(record.info.session_id, processId));
  }

  /** Connects to a running managed process's stdin/stdout through its token-checked relay. */
  async attach(sessionId: string, processId: string): Promise<Attachment> {
    const record = this.#requireSession(sessionId);
    const sid = record.info.session_id;
    const state = this.#procs.get(sid, processId);
    if (state.status !== 'running') {
      throw boxError('box.process_conflict', `managed process ${processId} in session ${sid} is not running (exit code ${state.exit_code})`, {
        session_id: sid,
        process_id: processId,
      });
    }
    const token = readFileSync(this.layout.tokenFile(sid), 'utf8').trim();
    return attachToSocket(state.socket_path, token, processId);
  }

  /** The relay socket of a managed process (for tests of its authentication). */
  processSocket(sessionId: string, processId: string): string {
    return this.#procs.get(assertSessionId(sessionId), processId).socket_path;
  }

  // ---- lifecycle ----

  /** Removes idle, dead and orphaned sessions (run at every lbot start and periodically under serve). */
  async reapExpired(): Promise<string[]> {
    if (!this.config.enabled) return [];
    return this.#store.reapExpired();
  }

  /** Removes sandboxes no session record references; `engines` also asks docker/podman (slower). */
  async cleanupOrphans(opts: { engines?: boolean } = {}): Promise<void> {
    const known = new Set(this.#store.list().map((r) => r.info.backend_session_id));
    const names: BackendName[] = opts.engines ? ['bwrap', 'host', 'docker', 'podman'] : ['bwrap', 'host'];
    for (const name of names) {
      try {
        await this.#backends[name].cleanupOrphans(known);
      } catch (err) {
        this.#warn(`orphan cleanup for the ${name} backend failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  /** Runs the reaper every min(reaper_interval_sec, TTL) seconds until `close()`; errors are reported, not thrown. */
  startReaper(): { close(): void } {
    const ttl = this.config.session_ttl_sec;
    const every = Math.max(1, Math.min(this.config.limits.reaper_interval_sec, ttl > 0 ? ttl : Infinity)) * 1000;
    return startInterval(
      every,
      () => this.reapExpired().then(() => this.cleanupOrphans()),
      (err) => this.#warn(`box reaper: ${err instanceof Error ? err.message : String(err)}`),
    );
  }

  /** `serve` shutdown: removes the non-persistent sessions this process created. */
  async shutdown(): Promise<void> {
    const me = this.#owner;
    if (me.kind !== 'serve') return;
    for (const record of this.#store.list()) {
      const o = record.owner;
      if (o.kind === 'serve' && o.pid === me.pid && o.start === me.start && !record.info.persistent) await this.#store.drop(record.info.session_id);
    }
  }
}

/** Creates the box service of a data dir. */
export function createBoxService(opts: BoxServiceOptions): BoxService {
  return new BoxService(opts);
}

/**
 * Start-of-command housekeeping any lbot command may run: removes expired, dead and orphaned box
 * sessions of a data dir. Cheap when there are none; never throws.
 */
export async function reapBoxSessions(dataDir: string, config: BoxConfig, warn?: (message: string) => void): Promise<void> {
  try {
    const box = createBoxService({ dataDir, config, ...(warn ? { warn } : {}) });
    await box.reapExpired();
    await box.cleanupOrphans();
  } catch (err) {
    warn?.(`box housekeeping failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}
