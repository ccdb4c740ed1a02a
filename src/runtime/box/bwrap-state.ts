// A bwrap session's stored state: what its record holds, checked whenever it is read back.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { LbotError } from '../../core/errors.js';
import type { SessionRecord } from './backend.js';

const IdentitySchema = z.strictObject({ pid: z.number().int(), start: z.string(), boot: z.string() });

export const BwrapStateSchema = z.strictObject({
  dir: z.string(),
  holder: IdentitySchema,
  ns: IdentitySchema,
  cgroups: z.array(z.string()),
  limits_mode: z.enum(['cgroup2', 'cgroup1', 'rlimit']),
  volume: z.boolean(),
  workspace_dir: z.string(),
  tmp_dir: z.string(),
  home_dir: z.string(),
  /** Root hosts: the unprivileged uid/gid the sandbox and every exec run as. */
  run_as: z.strictObject({ uid: z.number().int(), gid: z.number().int() }).nullable().default(null),
  /** The exec agent's socket on the host (sessions started without the agent: null, execs enter with nsenter). */
  agent_socket: z.string().nullable().default(null),
});
export type BwrapState = z.infer<typeof BwrapStateSchema>;

export function parseState(record: SessionRecord): BwrapState {
  const parsed = BwrapStateSchema.safeParse(record.backend_state);
  if (!parsed.success) throw new LbotError('box.validation', `session ${record.info.session_id} has a damaged bwrap record; remove it with lbot box rm`);
  return parsed.data;
}

/** A directory-safe, bounded form of a session id. */
export function dirKey(sessionId: string): string {
  const body = sessionId.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 40);
  return `${body}_${randomBytes(4).toString('hex')}`;
}
