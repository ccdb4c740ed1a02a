// Managed processes (box.md §8): start/stop/status through detached supervisors that outlive the CLI.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { entryCommand } from '../../package-root.js';
import path from 'node:path';
import { boxError } from '../../core/box/errors.js';
import type { ManagedProcessInfo, ManagedProcessSpec } from '../../core/box/model.js';
import { readJson, touch, writeJsonAtomic } from './files.js';
import type { BoxLayout } from './layout.js';
import { isIdentityAlive } from '../process/identity.js';
import { childEnv } from '../process/env.js';
import { signalPid } from '../process/group.js';
import { ProcessStateSchema, SUPERVISOR_CONFIG_ENV, SUPERVISOR_TOKEN_ENV, type ProcessState, type SupervisorConfig } from './process-state.js';
import type { SandboxBackend, SessionRecord } from './backend.js';

/** A supervisor's start failure; `[box.unavailable] …` (its process could not join the session cgroup) keeps its code. */
function supervisorError(text: string): Error {
  const m = /^\[box\.unavailable\] ([\s\S]*)$/.exec(text);
  return m?.[1] !== undefined ? boxError('box.unavailable', m[1], { reason: 'limits_unavailable' }) : new Error(text);
}

const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 7_000;

export type ProcessLimits = { perSession: number; total: number };

export class ProcessManager {
  constructor(
    readonly layout: BoxLayout,
    readonly limits: ProcessLimits,
  ) {}

  #stateFile(sid: string, pid: string): string {
    return path.join(this.layout.processDir(sid, pid), 'state.json');
  }

  readState(sid: string, pid: string): ProcessState | null {
    const state = readJson(this.#stateFile(sid, pid), ProcessStateSchema);
    if (state && state.status === 'running' && !isIdentityAlive(state.supervisor)) {
      // The supervisor died without recording an exit (killed, or the machine rebooted).
      return { ...state, status: 'exited', exited_at: state.exited_at ?? new Date().toISOString() };
    }
    return state;
  }

  ids(sid: string): string[] {
    try {
      return readdirSync(this.layout.processesDir(sid));
    } catch {
      return [];
    }
  }

  running(sid: string): ProcessState[] {
    return this.ids(sid)
      .map((pid) => this.readState(sid, pid))
      .filter((s): s is ProcessState => s !== null && s.status === 'running');
  }

  /** Running processes, and processes still starting (a spec written moments ago, no state yet). */
  hasRunning(sid: string): boolean {
    if (this.running(sid).length > 0) return true;
    return this.ids(sid).some((pid) => {
      const dir = this.layout.processDir(sid, pid);
      if (existsSync(path.join(dir, 'state.json'))) return false;
      try {
        return Date.now() - statSync(path.join(dir, 'spec.json')).mtimeMs < START_TIMEOUT_MS;
      } catch {
        return false;
      }
    });
  }

  info(state: ProcessState): ManagedProcessInfo {
    let preview = '';
    try {
      preview = readFileSync(path.join(this.layout.processDir(state.session_id, state.process_id), 'stderr.txt'), 'utf8');
    } catch {
      preview = '';
    }
    return {
      session_id: state.session_id,
      process_id: state.process_id,
      status: state.status,
      command: state.command,
      args: state.args,
      cwd: state.cwd,
      env_keys: state.env_keys,
      attached: state.status === 'running' && state.attached,
      started_at: state.started_at,
      exited_at: state.exited_at,
      exit_code: state.exit_code,
      stderr_preview: preview,
    };
  }

  get(sid: string, pid: string): ProcessState {
    const state = this.readState(sid, pid);
    if (!state) throw boxError('box.process_not_found', `session ${sid} has no managed process with process_id=${pid}`, { session_id: sid, process_id: pid });
    return state;
  }

  /** Starts a managed process; a running one with the same id is a conflict unless `replace` (call under the session lock). */
  async start(
    record: SessionRecord,
    backend: SandboxBackend,
    spec: ManagedProcessSpec,
    opts: { replace?: boolean; countAll: () => number },
  ): Promise<ManagedProcessInfo> {
    const sid = record.info.session_id;
    const pid = spec.process_id;
    const existing = this.readState(sid, pid);
    if (existing?.status === 'running') {
      if (!opts.replace) {
        throw boxError('box.process_conflict', `managed process ${pid} is already running in session ${sid}; stop it first with lbot box process stop`, {
          session_id: sid,
          process_id: pid,
        });
      }
      await this.stop(sid, pid);
    } else if (existing) rmSync(this.layout.processDir(sid, pid), { recursive: true, force: true });
    if (this.running(sid).length >= this.limits.perSession) {
      throw boxError(
        'box.session_limit',
        `session ${sid} already runs ${this.limits.perSession} managed processes (box.limits.max_managed_processes_per_session)`,
        { session_id: sid },
      );
    }
    if (opts.countAll() >= this.limits.total) {
      throw boxError('box.session_limit', `lbot already runs ${this.limits.total} managed processes (box.limits.max_managed_processes)`, { session_id: sid });
    }
    const launch = await backend.processLaunch(record, spec);
    const dir = this.layout.processDir(sid, pid);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const cfg: SupervisorConfig = {
      session_id: sid,
      process_id: pid,
      argv: launch.argv,
      env: launch.env,
      cgroups: launch.cgroups,
      gate: launch.gate,
      socket_path: this.layout.socketPath(sid, pid),
      state_file: this.#stateFile(sid, pid),
      stderr_file: path.join(dir, 'stderr.txt'),
      log_file: path.join(dir, 'supervisor.log'),
      busy_file: this.layout.busyFile(sid, pid),
      last_used_file: this.layout.lastUsedFile(sid),
      command: spec.command,
      args: spec.args,
      cwd: spec.cwd,
      env_keys: Object.keys(spec.env).sort(),
    };
    writeJsonAtomic(path.join(dir, 'spec.json'), { ...spec, env: undefined, env_keys: cfg.env_keys });
    const token = readFileSync(this.layout.tokenFile(sid), 'utf8').trim();
    // Mark the session busy before the supervisor is up, so neither the reaper nor the holder's own TTL
    // check ends the session while the process is starting.
    writeFileSync(cfg.busy_file, '');
    touch(this.layout.lastUsedFile(sid));
    try {
      await this.#spawnSupervisor(cfg, token);
    } catch (err) {
      rmSync(cfg.busy_file, { force: true });
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    touch(this.layout.lastUsedFile(sid));
    return this.info(this.get(sid, pid));
  }

  #spawnSupervisor(cfg: SupervisorConfig, token: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const [cmd, ...args] = entryCommand('runtime/box/supervisor');
      const child = spawn(cmd ?? process.execPath, args, {
        detached: true,
        stdio: ['ignore', 'pipe', 'ignore'],
        env: childEnv('helper', { [SUPERVISOR_CONFIG_ENV]: JSON.stringify(cfg), [SUPERVISOR_TOKEN_ENV]: token }),
      });
      let out = '';
      let done = false;
      const finish = (err?: Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        child.stdout?.destroy();
        child.unref();
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(() => {
        if (child.pid) signalPid(child.pid, 'SIGKILL');
        finish(new Error(`the supervisor of managed process ${cfg.process_id} did not start within ${START_TIMEOUT_MS} ms`));
      }, START_TIMEOUT_MS);
      child.on('error', (err) => finish(err));
      // 'close', not 'exit': the supervisor's last words on stdout (an `error …` line) are read by then.
      child.on('close', (code) =>
        finish(
          out.startsWith('error ')
            ? supervisorError(out.slice(6).trim())
            : new Error(`the supervisor of managed process ${cfg.process_id} exited early (code ${code}): ${out.trim().slice(0, 300)}`),
        ),
      );
      child.stdout?.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        if (out.includes('ready\n')) finish();
        else if (out.startsWith('error ') && out.endsWith('\n')) finish(supervisorError(out.slice(6).trim()));
      });
    });
  }

  /** Stops a managed process and removes it from the session (call under the session lock). */
  async stop(sid: string, pid: string): Promise<void> {
    const state = this.get(sid, pid);
    await this.#terminate(state, STOP_TIMEOUT_MS);
    rmSync(this.layout.processDir(sid, pid), { recursive: true, force: true });
    rmSync(this.layout.busyFile(sid, pid), { force: true });
    touch(this.layout.lastUsedFile(sid));
  }

  async #terminate(state: ProcessState, timeoutMs: number, hard = false): Promise<void> {
    const sup = state.supervisor;
    if (isIdentityAlive(sup)) {
      if (hard && state.child_pid) signalPid(-state.child_pid, 'SIGKILL');
      signalPid(sup.pid, 'SIGTERM');
      const deadline = Date.now() + timeoutMs;
      while (isIdentityAlive(sup) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      if (isIdentityAlive(sup)) signalPid(sup.pid, 'SIGKILL');
    }
    if (state.child_pid) signalPid(-state.child_pid, 'SIGKILL');
  }

  /** Kills every managed process of a session quickly (the session is going away). */
  async stopAll(sid: string): Promise<void> {
    const states = this.ids(sid)
      .map((pid) => this.readState(sid, pid))
      .filter((s): s is ProcessState => s !== null);
    await Promise.all(states.map((s) => this.#terminate(s, 2000, true)));
  }
}
