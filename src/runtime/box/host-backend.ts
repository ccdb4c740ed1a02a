// The host backend: no isolation at all, only when named explicitly (box.md §6.2); dirs stand in for mounts.
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { measureUsage, fileSizeLimitBytes } from '../../core/box/quota.js';
import { argvToCommand } from '../../core/box/shell.js';
import { isUnderPath } from '../../core/box/spec.js';
import type { BoxSpec, ManagedProcessSpec } from '../../core/box/model.js';
import { LbotError } from '../../core/errors.js';
import { SANDBOX_PATH, buildExecScript } from './bwrap-args.js';
import { runProcess, type RunOutcome } from './run-process.js';
import {
  execRunOptions,
  type BackendProbe,
  type QuotaWatchPlan,
  type ExecRequest,
  type ProcessLaunch,
  type SandboxBackend,
  type SessionRecord,
  type StartContext,
} from './backend.js';

const HostStateSchema = z.strictObject({ dir: z.string(), workspace_dir: z.string(), tmp_dir: z.string(), home_dir: z.string() });
type HostState = z.infer<typeof HostStateSchema>;

/** Every process of a host session carries this variable (last, so --env cannot replace it): how the quota watcher finds them. */
const SESSION_MARKER = 'LBOT_BOX_SESSION';
const markerOf = (state: HostState) => createHash('sha256').update(state.dir).digest('hex').slice(0, 24);

function parse(record: SessionRecord): HostState {
  const s = HostStateSchema.safeParse(record.backend_state);
  if (!s.success) throw new LbotError('box.validation', `session ${record.info.session_id} has a damaged host-backend record; remove it with lbot box rm`);
  return s.data;
}

export class HostBackend implements SandboxBackend {
  readonly name = 'host' as const;

  constructor(readonly baseDir: string) {}

  async probe(): Promise<BackendProbe> {
    return { available: true, reason: 'no isolation: commands run directly on this machine', limits_mode: 'rlimit', seccomp: 'none' };
  }

  async startSession(_spec: BoxSpec, ctx: StartContext): Promise<{ backend_session_id: string; state: Record<string, unknown> }> {
    const dir = path.join(this.baseDir, ctx.key.replace(/[^A-Za-z0-9_.-]/g, '-'));
    const state: HostState = { dir, workspace_dir: path.join(dir, 'workspace'), tmp_dir: path.join(dir, 'tmp'), home_dir: path.join(dir, 'home') };
    for (const d of [state.workspace_dir, state.tmp_dir, state.home_dir]) mkdirSync(d, { recursive: true, mode: 0o700 });
    return { backend_session_id: dir, state };
  }

  /** Maps a sandbox path under the mount path to the host directory standing in for it. */
  #hostDir(record: SessionRecord, state: HostState, p: string): string {
    const root = record.info.host_path ?? state.workspace_dir;
    return isUnderPath(p, record.info.mount_path) ? path.join(root, path.relative(record.info.mount_path, p)) : p;
  }

  #env(state: HostState, extra: Record<string, string>): Record<string, string> {
    return {
      PATH: SANDBOX_PATH,
      HOME: state.home_dir,
      TMPDIR: state.tmp_dir,
      LANG: 'C.UTF-8',
      PYTHONUNBUFFERED: '1',
      ...extra,
      [SESSION_MARKER]: markerOf(state),
    };
  }

  async exec(record: SessionRecord, req: ExecRequest): Promise<RunOutcome> {
    const state = parse(record);
    const script = buildExecScript({
      workdir: this.#hostDir(record, state, req.workdir),
      cmd: req.cmd,
      limits: { fileBytes: fileSizeLimitBytes(record.info.workspace_quota_mb), openFiles: 256 },
      gate: false,
    });
    return runProcess({
      argv: ['/bin/sh', '-c', script, 'sh'],
      env: this.#env(state, req.env),
      ...execRunOptions(req),
    });
  }

  async processLaunch(record: SessionRecord, spec: ManagedProcessSpec): Promise<ProcessLaunch> {
    const state = parse(record);
    const script = buildExecScript({
      workdir: this.#hostDir(record, state, spec.cwd),
      cmd: argvToCommand([spec.command, ...spec.args]),
      limits: { fileBytes: fileSizeLimitBytes(record.info.workspace_quota_mb), openFiles: 256 },
      gate: false,
    });
    return { argv: ['/bin/sh', '-c', script, 'sh'], env: this.#env(state, spec.env), cgroups: [], gate: false };
  }

  async isSessionAlive(record: SessionRecord): Promise<boolean> {
    const s = HostStateSchema.safeParse(record.backend_state);
    return s.success && existsSync(s.data.dir);
  }

  async stopSession(record: SessionRecord): Promise<void> {
    const s = HostStateSchema.safeParse(record.backend_state);
    if (s.success) rmSync(s.data.dir, { recursive: true, force: true });
  }

  async usage(record: SessionRecord): Promise<number> {
    const state = parse(record);
    return measureUsage([record.info.host_path ?? state.workspace_dir, state.tmp_dir, state.home_dir]);
  }

  /** No namespaces to kill: the watcher stops the processes that carry the session's env marker (best effort, no isolation). */
  quotaWatch(record: SessionRecord): QuotaWatchPlan {
    const state = parse(record);
    return {
      dirs: [record.info.host_path ?? state.workspace_dir, state.tmp_dir, state.home_dir],
      statfs: [],
      stop: { kind: 'env_marker', name: SESSION_MARKER, value: markerOf(state) },
    };
  }

  async cleanupOrphans(known: ReadonlySet<string>): Promise<void> {
    let names: string[] = [];
    try {
      names = readdirSync(this.baseDir);
    } catch {
      return;
    }
    for (const n of names) {
      const dir = path.join(this.baseDir, n);
      try {
        if (!known.has(dir) && Date.now() - statSync(dir).mtimeMs > 60_000) rmSync(dir, { recursive: true, force: true });
      } catch {
        // gone
      }
    }
  }
}
