// A managed-process request as the CLI, a tool or the HTTP API sends it, with its defaults filled in.
import { validationError } from '../../core/box/errors.js';
import { ManagedProcessSpecSchema, type ManagedProcessSpec } from '../../core/box/model.js';

export type ProcessRequest = { process_id?: string; command: string; args?: string[]; env?: Record<string, string>; cwd?: string };

export function parseProcessRequest(raw: ProcessRequest): ManagedProcessSpec {
  const parsed = ManagedProcessSpecSchema.safeParse({
    process_id: raw.process_id ?? 'default',
    command: raw.command,
    args: raw.args ?? [],
    env: raw.env ?? {},
    cwd: raw.cwd ?? '/workspace',
  });
  if (!parsed.success) throw validationError(parsed.error.issues[0]?.message ?? 'invalid managed process spec');
  return parsed.data;
}
