// The contract between the box service and its backends (bwrap, docker/podman, host), and the session record.
import { z } from 'zod';
import { SessionInfoSchema, type BackendName, type BoxSpec, type ManagedProcessSpec } from '../../core/box/model.js';
import type { RunOutcome, RunRequest, RunSinks } from './run-process.js';

export const OwnerSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('cli') }),
  z.strictObject({ kind: z.literal('serve'), pid: z.number().int(), start: z.string(), boot: z.string() }),
]);
export type Owner = z.infer<typeof OwnerSchema>;

/** What `<data-dir>/box/sessions/<id>/record.json` holds. */
export const SessionRecordSchema = z.strictObject({
  info: SessionInfoSchema,
  owner: OwnerSchema,
  one_shot: z.boolean().default(false),
  /** Backend-specific state (holder pid, dirs, cgroups, container name); parsed by the backend. */
  backend_state: z.record(z.string(), z.unknown()),
});
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

/** `seccomp` says what syscall filter sandboxes get: `filter` (lbot's), `engine` (the container engine's), `none`. */
const IdentitySchema = z.strictObject({ pid: z.number().int(), start: z.string(), boot: z.string() });

/**
 * What the detached quota watcher of a session needs, without the backend object: what to measure
 * (directories walked like `measureUsage`, plus filesystems whose used space counts) and how to stop
 * every process of the session (kill the PID namespace's init, kill the processes carrying an env
 * marker, or run a command). Crosses a process boundary, hence a schema.
 */
export const QuotaWatchPlanSchema = z.strictObject({
  dirs: z.array(z.string()),
  statfs: z.array(z.string()),
  stop: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('pidns'), init: IdentitySchema }),
    z.strictObject({ kind: z.literal('env_marker'), name: z.string(), value: z.string() }),
    z.strictObject({ kind: z.literal('command'), argv: z.array(z.string()).min(1) }),
  ]),
});
export type QuotaWatchPlan = z.infer<typeof QuotaWatchPlanSchema>;

export type BackendProbe = { available: boolean; reason: string; limits_mode?: string; seccomp?: 'filter' | 'engine' | 'none' };

export type StartContext = {
  /** Directory bound read-only into the sandbox at /.lbot/state (last-use and busy markers; no secrets). */
  sharedDir: string;
  /** Session TTL the holder enforces by itself (0 = never). */
  ttlSec: number;
  /** A short unique name for backend resources of this session. */
  key: string;
};

export type ExecRequest = {
  cmd: string;
  workdir: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** lbot's own helpers (file tools) are exempt from the address-space rlimit. */
  internal?: boolean;
  stdin?: Buffer;
  sinks?: RunSinks;
  signal?: AbortSignal;
  captureBytes: number;
  watchdog?: { intervalMs: number; check: () => Promise<string | null> };
};

/** The run options of an exec that every backend passes to runProcess unchanged. */
export function execRunOptions(req: ExecRequest): Omit<RunRequest, 'argv' | 'env'> {
  return {
    timeoutMs: req.timeoutMs,
    captureBytes: req.captureBytes,
    ...(req.stdin ? { stdin: req.stdin } : {}),
    ...(req.sinks ? { sinks: req.sinks } : {}),
    ...(req.signal ? { signal: req.signal } : {}),
    ...(req.watchdog ? { watchdog: req.watchdog } : {}),
  };
}

/** How a managed process is launched: the supervisor spawns `argv` with `env` and gates it into `cgroups`. */
export type ProcessLaunch = { argv: string[]; env: Record<string, string>; cgroups: string[]; gate: boolean };

export interface SandboxBackend {
  readonly name: BackendName;
  /** Whether this backend can run sandboxes here; never throws. */
  probe(): Promise<BackendProbe>;
  startSession(spec: BoxSpec, ctx: StartContext): Promise<{ backend_session_id: string; state: Record<string, unknown> }>;
  exec(record: SessionRecord, req: ExecRequest): Promise<RunOutcome>;
  processLaunch(record: SessionRecord, spec: ManagedProcessSpec): Promise<ProcessLaunch>;
  isSessionAlive(record: SessionRecord): Promise<boolean>;
  stopSession(record: SessionRecord): Promise<void>;
  /** Bytes used by the session's writable storage (workspace, /tmp, home), for the quota checks. */
  usage(record: SessionRecord): Promise<number>;
  /** How a quota watcher measures this session and stops its processes (null: the backend cannot say). */
  quotaWatch?(record: SessionRecord): QuotaWatchPlan | null;
  /** Removes sandboxes of this data dir that no session record references. */
  cleanupOrphans(known: ReadonlySet<string>): Promise<void>;
}
