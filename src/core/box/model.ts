// The box data model (box.md §2): spec, session info, execution results, managed processes, status.
import { z } from 'zod';
import { ENV_NAME_PATTERN } from '../env-policy.js';

export const DEFAULT_BOX_IMAGE = 'debian:bookworm-slim';
export const DEFAULT_MOUNT_PATH = '/workspace';
export const DEFAULT_PROCESS_ID = 'default';
export const SKILL_MOUNT_PREFIX = '/workspace/.skills';

export const BACKEND_NAMES = ['bwrap', 'docker', 'podman', 'host'] as const;
export const BackendNameSchema = z.enum(BACKEND_NAMES);
export type BackendName = z.infer<typeof BackendNameSchema>;

export const NetworkModeSchema = z.enum(['off', 'on']);
export type NetworkMode = z.infer<typeof NetworkModeSchema>;

export const HostMountModeSchema = z.enum(['none', 'ro', 'rw']);
export type HostMountMode = z.infer<typeof HostMountModeSchema>;

export const MountSpecSchema = z.strictObject({
  host_path: z.string(),
  mount_path: z.string(),
  mode: HostMountModeSchema.default('rw'),
});
export type MountSpec = z.infer<typeof MountSpecSchema>;

/** A fully validated spec (box.md §2.3): what a session is created with and an exec runs under. */
export const BoxSpecSchema = z.strictObject({
  session_id: z.string(),
  cmd: z.string(),
  workdir: z.string(),
  timeout_sec: z.number().int().positive(),
  network: NetworkModeSchema,
  env: z.record(z.string(), z.string()),
  image: z.string(),
  host_path: z.string().nullable(),
  host_path_mode: HostMountModeSchema,
  mount_path: z.string(),
  extra_mounts: z.array(MountSpecSchema),
  persistent: z.boolean(),
  cpus: z.number().positive(),
  memory_mb: z.number().int().min(32),
  pids_limit: z.number().int().min(1),
  read_only_rootfs: z.boolean(),
  workspace_quota_mb: z.number().int().min(0),
});
export type BoxSpec = z.infer<typeof BoxSpecSchema>;

/** The spec fields two requests must agree on to share a session (box.md §5.3), in comparison order. */
export const COMPAT_FIELDS = [
  'network',
  'image',
  'host_path',
  'host_path_mode',
  'mount_path',
  'persistent',
  'cpus',
  'memory_mb',
  'pids_limit',
  'read_only_rootfs',
  'workspace_quota_mb',
] as const satisfies readonly (keyof BoxSpec)[];
export type CompatField = (typeof COMPAT_FIELDS)[number];

export const SessionInfoSchema = z.strictObject({
  session_id: z.string(),
  backend_name: BackendNameSchema,
  backend_session_id: z.string(),
  image: z.string(),
  network: NetworkModeSchema,
  host_path: z.string().nullable(),
  host_path_mode: HostMountModeSchema,
  mount_path: z.string(),
  persistent: z.boolean(),
  cpus: z.number(),
  memory_mb: z.number(),
  pids_limit: z.number(),
  read_only_rootfs: z.boolean(),
  workspace_quota_mb: z.number(),
  extra_mounts: z.array(MountSpecSchema),
  created_at: z.string(),
  last_used_at: z.string(),
});
export type SessionInfo = z.infer<typeof SessionInfoSchema>;

export type ExecutionStatus = 'completed' | 'timed_out';

/** What a backend reports for one exec (box.md §2.4), before tool-output truncation. */
export type ExecutionResult = {
  session_id: string;
  backend_name: BackendName;
  status: ExecutionStatus;
  exit_code: number | null;
  stdout: string;
  stderr: string;
  duration_ms: number;
};

/** What `lbot box exec --json` and the `exec` tool return (box.md §2.4). */
export type ToolResult = {
  session_id: string;
  backend: BackendName;
  status: ExecutionStatus;
  ok: boolean;
  exit_code: number | null;
  stdout: string;
  stderr: string;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  duration_ms: number;
};

export const PROCESS_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export { ENV_NAME_PATTERN } from '../env-policy.js';

export const ManagedProcessSpecSchema = z.strictObject({
  process_id: z.string().regex(PROCESS_ID_PATTERN, 'process ids are 1-64 characters of A-Z a-z 0-9 _ . - and start with a letter or digit'),
  command: z.string().trim().min(1, 'command must not be empty'),
  args: z.array(z.string()),
  env: z.record(z.string().regex(ENV_NAME_PATTERN, 'env names must be shell identifiers'), z.string()),
  cwd: z.string().startsWith('/', 'cwd must be an absolute path'),
});
export type ManagedProcessSpec = z.infer<typeof ManagedProcessSpecSchema>;

export type ManagedProcessStatus = 'running' | 'exited';

export type ManagedProcessInfo = {
  session_id: string;
  process_id: string;
  status: ManagedProcessStatus;
  command: string;
  args: string[];
  cwd: string;
  env_keys: string[];
  attached: boolean;
  started_at: string;
  exited_at: string | null;
  exit_code: number | null;
  stderr_preview: string;
};

export const ErrorRecordSchema = z.strictObject({
  timestamp: z.string(),
  type: z.string(),
  code: z.string(),
  message: z.string(),
  query_id: z.string().nullable(),
});
export type ErrorRecord = z.infer<typeof ErrorRecordSchema>;

export type BackendInfo = { name: BackendName | null; available: boolean; limits_mode?: string; seccomp?: string; reason?: string };

export type BoxStatus = {
  available: boolean;
  enabled: boolean;
  profile: string;
  backend: BackendInfo;
  active_sessions: number;
  managed_processes: number;
  session_ttl_sec: number;
  recent_error_count: number;
  /** Sessions the quota watcher stopped, until the next command on that id reports it (box.quota_exceeded). */
  quota_stops?: Array<{ session_id: string; code: 'box.quota_exceeded'; message: string; stopped_at: string }>;
  connector_error?: string;
};
