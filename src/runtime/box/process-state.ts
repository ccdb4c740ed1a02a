// What a managed-process supervisor is told (config) and what it reports (state file) — shared by both sides.
import { z } from 'zod';

const IdentitySchema = z.strictObject({ pid: z.number().int(), start: z.string(), boot: z.string() });

export const SupervisorConfigSchema = z.strictObject({
  session_id: z.string(),
  process_id: z.string(),
  argv: z.array(z.string()).min(1),
  env: z.record(z.string(), z.string()),
  cgroups: z.array(z.string()),
  gate: z.boolean(),
  socket_path: z.string(),
  state_file: z.string(),
  stderr_file: z.string(),
  log_file: z.string(),
  busy_file: z.string(),
  last_used_file: z.string(),
  command: z.string(),
  args: z.array(z.string()),
  cwd: z.string(),
  env_keys: z.array(z.string()),
});
export type SupervisorConfig = z.infer<typeof SupervisorConfigSchema>;

export const ProcessStateSchema = z.strictObject({
  session_id: z.string(),
  process_id: z.string(),
  supervisor: IdentitySchema,
  child_pid: z.number().int().nullable(),
  status: z.enum(['running', 'exited']),
  command: z.string(),
  args: z.array(z.string()),
  cwd: z.string(),
  env_keys: z.array(z.string()),
  attached: z.boolean(),
  socket_path: z.string(),
  started_at: z.string(),
  exited_at: z.string().nullable(),
  exit_code: z.number().int().nullable(),
});
export type ProcessState = z.infer<typeof ProcessStateSchema>;

/** Env var names that carry the supervisor's config and the relay token (never argv). */
export const SUPERVISOR_CONFIG_ENV = 'LBOT_BOX_SUPERVISOR';
export const SUPERVISOR_TOKEN_ENV = 'LBOT_BOX_TOKEN';
export const STDERR_PREVIEW_CHARS = 4000;
