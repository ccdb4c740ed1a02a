// The wire of the remote box API (`lbot box serve`, docs/box.md "Remote box"): request bodies and answers,
// parsed by the server on the way in and by the remote client on the way back.
import { z } from 'zod';
import { ErrorValueSchema } from '../protocol/error-value.js';
import { BoxExec, BoxProcess, BoxSession, BoxStatus } from '../shapes/box.js';
import { MountSpecSchema } from './model.js';

/** Where every route of the API sits; all of them need the deployment's bearer token. */
export const REMOTE_BOX_PREFIX = '/v1/box';

/** Default cap on a request body (a `write` tool call carries the file's text). */
export const REMOTE_BOX_BODY_LIMIT = 8 * 1024 * 1024;

const specValue = z.unknown().optional();

/**
 * An exec request: the fields of a box spec request. Values are checked by the service's spec builder
 * (the same code as a local `lbot box exec`), so only the field names and the id types are checked here.
 */
export const RemoteExecInputSchema = z.strictObject({
  session_id: z.string().nullable().optional(),
  cmd: z.string(),
  profile: z.string().nullable().optional(),
  query_id: z.string().nullable().optional(),
  image: specValue,
  timeout_sec: specValue,
  network: specValue,
  env: z.record(z.string(), z.string()).optional(),
  host_path: specValue,
  host_path_mode: specValue,
  mount_path: specValue,
  workdir: specValue,
  extra_mounts: z.array(MountSpecSchema).optional(),
  persistent: specValue,
  cpus: specValue,
  memory_mb: specValue,
  pids_limit: specValue,
  read_only_rootfs: specValue,
  workspace_quota_mb: specValue,
});
export type RemoteExecInput = z.infer<typeof RemoteExecInputSchema>;

/** A native tool's file operation (core/tools/native.ts `FileOp`); the path is checked inside the sandbox. */
export const FileOpSchema = z.discriminatedUnion('op', [
  z.strictObject({
    op: z.literal('read'),
    path: z.string(),
    offset: z.number().int().nullable(),
    limit: z.number().int().nullable(),
    max_bytes: z.number().int().positive(),
  }),
  z.strictObject({ op: z.literal('write'), path: z.string(), content: z.string(), append: z.boolean() }),
  z.strictObject({ op: z.literal('edit'), path: z.string(), old_string: z.string(), new_string: z.string() }),
  z.strictObject({ op: z.literal('glob'), path: z.string(), match: z.string(), max: z.number().int().positive() }),
  z.strictObject({
    op: z.literal('grep'),
    path: z.string(),
    source: z.string(),
    flags: z.string(),
    include: z.string(),
    max_matches: z.number().int().positive(),
    max_files: z.number().int().positive(),
  }),
]);

export const FileOpBodySchema = z.strictObject({
  session: z.strictObject({ id: z.string(), extra_mounts: z.array(MountSpecSchema).optional() }),
  op: FileOpSchema,
  query_id: z.string().min(1),
});
export type FileOpBody = z.infer<typeof FileOpBodySchema>;

export const FileOpResultSchema = z.record(z.string(), z.unknown());

export const ProcessStartBodySchema = z.strictObject({
  process_id: z.string(),
  command: z.string(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  replace: z.boolean().optional(),
});
export type ProcessStartBody = z.infer<typeof ProcessStartBodySchema>;

export const ExecAnswerSchema = BoxExec.schema;
export const StatusAnswerSchema = BoxStatus.schema;
export const SessionsAnswerSchema = z.strictObject({ sessions: z.array(BoxSession.schema) });
export const SessionAnswerSchema = BoxSession.schema.extend({ processes: z.array(BoxProcess.schema) });
export const ProcessAnswerSchema = BoxProcess.schema;
export const OkAnswerSchema = z.looseObject({ ok: z.literal(true) });

/** Every refusal: the error value of acceptance §0.3 with its stable code. */
export const ErrorAnswerSchema = z.strictObject({ ok: z.literal(false), error: ErrorValueSchema });
