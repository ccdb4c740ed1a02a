// Shapes of `lbot box …`: exec results, sessions, managed processes, status, errors, profiles.
import { z } from 'zod';
import { BackendNameSchema, BoxSpecSchema, ErrorRecordSchema, HostMountModeSchema, NetworkModeSchema, SessionInfoSchema } from '../box/model.js';
import { defineShape } from './shape.js';

export const BoxExec = defineShape(
  'BoxExec',
  'item',
  'what `box exec --json` ran and how it ended, with the spec it ran under',
  z.strictObject({
    session_id: z.string(),
    backend: BackendNameSchema,
    status: z.enum(['completed', 'timed_out']),
    ok: z.boolean(),
    exit_code: z.number().int().nullable(),
    stdout: z.string(),
    stderr: z.string(),
    stdout_truncated: z.boolean(),
    stderr_truncated: z.boolean(),
    duration_ms: z.number(),
    effective_spec: BoxSpecSchema,
  }),
);

export const BoxSession = defineShape(
  'BoxSession',
  'item',
  'a box session (`box sessions`)',
  SessionInfoSchema.extend({ backend: BackendNameSchema, alive: z.boolean(), managed_processes: z.number().int(), one_shot: z.boolean() }),
);

export const BoxProcess = defineShape(
  'BoxProcess',
  'item',
  'a managed process of a box session (`box process start|status`)',
  z.strictObject({
    session_id: z.string(),
    process_id: z.string(),
    status: z.string(),
    command: z.string(),
    args: z.array(z.string()),
    cwd: z.string(),
    env_keys: z.array(z.string()),
    attached: z.boolean(),
    started_at: z.string(),
    exited_at: z.string().nullable(),
    exit_code: z.number().int().nullable(),
    stderr_preview: z.string(),
  }),
);

export const BoxProcessStopped = defineShape(
  'BoxProcessStopped',
  'item',
  'a managed process `box process stop` stopped',
  z.strictObject({ stopped: z.string(), session_id: z.string() }),
);

export const BoxStatus = defineShape(
  'BoxStatus',
  'item',
  'whether box can run, on which backend, and how many sessions and processes are live (`box status`)',
  z.strictObject({
    available: z.boolean(),
    enabled: z.boolean(),
    profile: z.string(),
    backend: z.looseObject({ name: BackendNameSchema.nullable(), available: z.boolean() }),
    active_sessions: z.number().int(),
    managed_processes: z.number().int(),
    session_ttl_sec: z.number(),
    recent_error_count: z.number().int(),
    quota_stops: z
      .array(z.strictObject({ session_id: z.string(), code: z.literal('box.quota_exceeded'), message: z.string(), stopped_at: z.string() }))
      .optional(),
    connector_error: z.string().optional(),
  }),
);

export const BoxError = defineShape('BoxError', 'item', 'a recent box error (`box errors`)', ErrorRecordSchema);

export const BoxProfile = defineShape(
  'BoxProfile',
  'item',
  'a box profile and the fields a caller may not change (`box profiles`)',
  z.strictObject({
    name: z.string(),
    image: z.string(),
    network: NetworkModeSchema,
    timeout_sec: z.number(),
    host_path_mode: HostMountModeSchema,
    max_timeout_sec: z.number(),
    cpus: z.number(),
    memory_mb: z.number(),
    pids_limit: z.number(),
    read_only_rootfs: z.boolean(),
    workspace_quota_mb: z.number(),
    locked: z.array(z.string()),
  }),
);

export const BoxServeLine = defineShape(
  'BoxServeLine',
  'stream',
  'the line `box serve --json` prints once the box API listens',
  z.strictObject({
    type: z.literal('box.serve.ready'),
    url: z.string(),
    port: z.number().int(),
    token_file: z.string().nullable(),
    tls: z.boolean(),
  }),
);
