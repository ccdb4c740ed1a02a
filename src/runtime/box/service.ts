// The box service: spec building, mount policy, quota, sessions, exec, managed processes, status, reaping.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { BoxConfig } from '../../core/config.js';
import { boxError, validationError } from '../../core/box/errors.js';
import { assertNoSymlinkOnPath, createMountPolicy, validateSpecMounts, type MountPolicy } from '../../core/box/mounts.js';
import { getProfile } from '../../core/box/profiles.js';
import { QUOTA_MARGIN_BYTES, quotaExceeded, quotaLimitBytes, quotaUnreadable, measureUsage, unmeasurablePath, type QuotaPhase } from '../../core/box/quota.js';
import { assertSessionId } from '../../core/box/session-id.js';
import { buildSpec, isUnderPath, type SpecRequest } from '../../core/box/spec.js';
import { truncateText } from '../../core/box/truncate.js';
import {
  ManagedProcessSpecSchema,
  type BackendName,
  type BoxSpec,
  type BoxStatus,
  type ErrorRecord,
  type ManagedProcessInfo,
  type ManagedProcessSpec,
  type SessionInfo,
  type ToolResult,
} from '../../core/box/model.js';
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
import { clearQuotaStop, ensureQuotaWatcher, markCommand, pendingQuotaStops, stopQuotaWatcher, takeQuotaStop } from './quota-watch.js';
import type { RunOutcome } from './run-process.js';
import type { Owner, SandboxBackend, SessionRecord } from './backend.js';

/** A request as the CLI or a tool sends it; unset fields come from config and the profile. */
export type ExecInput = SpecRequest & {
  session_id?: string | null;
  cmd: string;
  profile?: string | null;
  query_id?: string | null;
};

export type ExecOptions = {
  sinks?: { stdout?: Writable; stderr?: Writable };
  signal?: AbortSignal;
  stdin?: Buffer;
  /** lbot's own helpers: no address-space rlimit, big capture, no error record. */
  internal?: boolean;
};

export type ExecOutput = { result: ToolResult; effective_spec: BoxSpec };
export type RawExecOutput = { outcome: RunOutcome; spec: BoxSpec; backend: BackendName };

export type SessionView = SessionInfo & { backend: BackendName; alive: boolean; managed_processes: number; one_shot: boolean };

export type BoxServiceOptions = {
  dataDir: string;
  config: BoxConfig;
  /** Who owns sessions created through this service: a one-shot CLI (default) or a `serve` process. */
  owner?: 'cli' | 'serve';
  /** Per-command `--backend`. */
  backend?: BackendName | null;
  warn?: (message: string) => void;
  /** Test seam: replace backends. */
  backends?: Partial<BackendSet>;
};

const INTERNAL_CAPTURE_BYTES = 16 * 1024 * 1024;
const WATCHDOG_INTERVAL_MS = 250;
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

  /** The shared default workspace (box.workspace_scope: shared), created on first use. */
  #sharedWorkspace(): string | null {
    if (this.config.workspace_scope !== 'shared') return null;
    const dir = this.config.default_workspace ? path.resolve(this.config.default_workspace) : path.join(this.layout.root, 'default');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** Builds and checks the effective spec of a request (profile merge, validation, mount policy). */
  buildSpec(input: ExecInput, sessionId: string): BoxSpec {
    const profile = getProfile(input.profile ?? this.config.profile);
    const shared = this.#sharedWorkspace();
    const { profile: _p, query_id: _q, ...fields } = input;
    let spec = buildSpec(
      { ...fields, session_id: sessionId },
      { profile, image: this.config.image, workspace_quota_mb: this.config.workspace_quota_mb, shared_workspace: shared },
    );
    const builtInShared = shared !== null && !this.config.default_workspace && spec.host_path === shared;
    spec = validateSpecMounts(spec, this.policy, { skipPrimary: builtInShared });
    for (const m of spec.extra_mounts) {
      if (spec.host_path !== null && spec.host_path_mode !== 'none' && isUnderPath(m.mount_path, spec.mount_path) && m.mount_path !== spec.mount_path) {
        assertNoSymlinkOnPath(spec.host_path, path.posix.relative(spec.mount_path, m.mount_path), `mount ${m.host_path}:${m.mount_path}`);
      }
    }
    return spec;
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

  /** Usage for a quota check; a workspace lbot cannot measure counts as over quota (box.quota_exceeded). */
  async #usage(phase: QuotaPhase, measure: () => Promise<number>, limit: number, where: string, sid: string): Promise<number> {
    try {
      return await measure();
    } catch (err) {
      if (unmeasurablePath(err) !== null) throw quotaUnreadable(phase, err, limit, where, sid);
      throw err;
    }
  }

  /** A quota stop the session's watcher recorded is reported by the next command on that id (the session is removed). */
  async #reportQuotaStop(sid: string): Promise<void> {
    const stopped = takeQuotaStop(this.layout, sid);
    if (!stopped) return;
    await this.#store.drop(sid);
    throw stopped;
  }

  /**
   * Starts the session's quota watcher when its quota is not enforced by a size-limited filesystem: it
   * outlives this command and stops the session's processes (background ones too) on a breach.
   */
  async #watchQuota(record: SessionRecord, backend: SandboxBackend): Promise<boolean> {
    const info = record.info;
    if (info.workspace_quota_mb <= 0 || (record.backend_state.volume === true && info.host_path === null)) return false;
    const plan = backend.quotaWatch?.(record) ?? null;
    if (!plan) return false;
    const limit = quotaLimitBytes(info.workspace_quota_mb);
    await ensureQuotaWatcher(this.layout, record, plan, {
      limitBytes: limit,
      thresholdBytes: limit + QUOTA_MARGIN_BYTES,
      where: info.host_path ?? 'the session workspace',
      errorsFile: this.layout.errorsFile,
      errorsLock: path.join(this.layout.locksDir, 'errors.lock'),
    });
    return true;
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
      const limit = quotaLimitBytes(spec.workspace_quota_mb);
      const where = spec.host_path ?? 'the session workspace';
      if (spec.workspace_quota_mb > 0) {
        const hostPath = spec.host_path;
        const used = await this.#usage(
          'before',
          () => (existing ? backend.usage(existing) : hostPath ? measureUsage([hostPath]) : Promise.resolve(0)),
          limit,
          where,
          sid,
        );
        if (used > limit) throw quotaExceeded('before', used, limit, where, sid);
      }
      const got = await this.#store.getOrCreate(spec, backend, { oneShot, known: existing });
      created = got.created;
      const record = got.record;
      const hardQuota = record.backend_state.volume === true && spec.host_path === null;
      if (!oneShot && (await this.#watchQuota(record, backend))) unmark = markCommand(this.layout, sid);
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
        ...(spec.workspace_quota_mb > 0 && !hardQuota
          ? {
              watchdog: {
                intervalMs: WATCHDOG_INTERVAL_MS,
                check: async () => {
                  let used: number;
                  try {
                    used = await backend.usage(record);
                  } catch (err) {
                    const unreadable = unmeasurablePath(err);
                    if (unreadable !== null) return `lbot: stopped: the workspace cannot be measured for its quota (${unreadable} cannot be read by lbot)`;
                    throw err;
                  }
                  return used > limit + QUOTA_MARGIN_BYTES
                    ? `lbot: stopped: the workspace quota of ${spec.workspace_quota_mb} MiB was exceeded (${used} bytes used)`
                    : null;
                },
              },
            }
          : {}),
      });
      this.#store.touch(sid);
      if (!oneShot) await this.#reportQuotaStop(sid);
      if (outcome.status === 'timed_out') {
        await this.#store.drop(sid);
      } else if (spec.workspace_quota_mb > 0) {
        const used = await this.#usage('after', () => backend.usage(record), limit, where, sid).catch(async (err: unknown) => {
          await this.#store.drop(sid);
          throw err;
        });
        if (used > limit) {
          await this.#store.drop(sid);
          throw quotaExceeded('after', used, limit, where, sid);
        }
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
    const limit = this.config.output_limit_chars;
    const out = outcome.stdout.text(limit);
    let stderrRaw = outcome.stderr.text(limit);
    if (outcome.status === 'timed_out' && outcome.stderr.totalBytes === 0)
      stderrRaw = { text: `Command timed out after ${spec.timeout_sec} seconds.`, truncated: false };
    const err = stderrRaw.truncated ? stderrRaw : truncateText(stderrRaw.text, limit);
    const exitCode = outcome.status === 'timed_out' ? null : outcome.exit_code;
    const status = outcome.status === 'timed_out' ? 'timed_out' : 'completed';
    return {
      result: {
        session_id: spec.session_id,
        backend,
        status,
        ok: status === 'completed' && exitCode === 0,
        exit_code: exitCode,
        stdout: out.text,
        stderr: err.text,
        stdout_truncated: out.truncated,
        stderr_truncated: err.truncated,
        duration_ms: outcome.duration_ms,
      },
      effective_spec: spec,
    };
  }

  /** All sessions with their last use, liveness and managed-process count. */
  async sessions(): Promise<SessionView[]> {
    const out: SessionView[] = [];
    for (const record of this.#store.list()) {
      const info = this.#store.info(record);
      out.push({
        ...info,
        backend: info.backend_name,
        alive: await this.#store.isAlive(record),
        managed_processes: this.#procs.running(info.session_id).length,
        one_shot: record.one_shot,
      });
    }
    return out.sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /** One session with its managed processes; unknown id → box.session_not_found. */
  async session(id: string): Promise<SessionView & { processes: ManagedProcessInfo[] }> {
    const record = this.#requireSession(id);
    const info = this.#store.info(record);
    const processes = this.#procs
      .ids(id)
      .map((p) => this.#procs.readState(id, p))
      .filter((s) => s !== null)
      .map((s) => this.#procs.info(s));
    return {
      ...info,
      backend: info.backend_name,
      alive: await this.#store.isAlive(record),
      managed_processes: processes.filter((p) => p.status === 'running').length,
      one_shot: record.one_shot,
      processes,
    };
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
    const running = records.reduce((n, r) => n + this.#procs.running(r.info.session_id).length, 0);
    const base = {
      enabled: this.config.enabled,
      profile: this.config.profile,
      active_sessions: records.length,
      managed_processes: running,
      session_ttl_sec: this.config.session_ttl_sec,
      recent_error_count: this.errors().length,
      ...quotaStopsField(pendingQuotaStops(this.layout)),
    };
    try {
      const { backend, probe } = await selectBackend(this.#backends, this.config, this.#override);
      return {
        ...base,
        available: true,
        backend: {
          name: backend.name,
          available: true,
          reason: probe.reason,
          ...(probe.limits_mode ? { limits_mode: probe.limits_mode } : {}),
          ...(probe.seccomp ? { seccomp: probe.seccomp } : {}),
        },
      };
    } catch (err) {
      const e = toLbotError(err);
      const name = this.#override ?? (this.config.backend === 'auto' ? null : this.config.backend);
      return { ...base, available: false, backend: { name, available: false, reason: e.message }, connector_error: e.message };
    }
  }

  /** Probes every backend (for `lbot doctor`). */
  async probeAll(): Promise<Array<{ name: BackendName; available: boolean; reason: string; limits_mode?: string }>> {
    const names: BackendName[] = ['bwrap', 'docker', 'podman', 'host'];
    return Promise.all(names.map(async (name) => ({ name, ...(await this.#backends[name].probe()) })));
  }

  // ---- managed processes ----

  /** Starts a managed process (creating the session with the default spec when it does not exist). */
  async startProcess(
    sessionId: string,
    raw: { process_id?: string; command: string; args?: string[]; env?: Record<string, string>; cwd?: string },
    opts: { replace?: boolean } = {},
  ): Promise<ManagedProcessInfo> {
    this.#ensureEnabled();
    const sid = assertSessionId(sessionId);
    const parsed = ManagedProcessSpecSchema.safeParse({
      process_id: raw.process_id ?? 'default',
      command: raw.command,
      args: raw.args ?? [],
      env: raw.env ?? {},
      cwd: raw.cwd ?? '/workspace',
    });
    if (!parsed.success) throw validationError(parsed.error.issues[0]?.message ?? 'invalid managed process spec');
    try {
      assertSafeEnv(parsed.data.env, `managed process ${parsed.data.process_id} env`);
    } catch (err) {
      await this.#errors.record(err, null);
      throw err;
    }
    return withLock(this.layout.execLock(sid), () => this.#startProcess(sid, parsed.data, opts), { timeoutMs: EXEC_LOCK_WAIT_MS, what: `box session ${sid}` });
  }

  async #startProcess(sid: string, spec: ManagedProcessSpec, opts: { replace?: boolean }): Promise<ManagedProcessInfo> {
    await this.#reportQuotaStop(sid);
    let record = this.#store.read(sid);
    if (!record || !(await this.#store.isAlive(record))) {
      const spec = this.buildSpec({ cmd: 'true' }, sid);
      record = (await this.#store.getOrCreate(spec, await this.#select())).record;
    } else this.#assertBackend(record);
    const rec = record;
    await this.#watchQuota(rec, this.#backendOf(rec));
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
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      this.reapExpired()
        .then(() => this.cleanupOrphans())
        .catch((err: unknown) => this.#warn(`box reaper: ${err instanceof Error ? err.message : String(err)}`))
        .finally(() => {
          running = false;
        });
    }, every);
    timer.unref();
    return { close: () => clearInterval(timer) };
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

/** Sessions the quota watcher stopped whose stop no command has reported yet (absent when none). */
function quotaStopsField(stops: ReturnType<typeof pendingQuotaStops>): Pick<BoxStatus, 'quota_stops'> {
  if (stops.length === 0) return {};
  return { quota_stops: stops.map((s) => ({ session_id: s.session_id, code: s.code, message: s.message, stopped_at: s.stopped_at })) };
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
