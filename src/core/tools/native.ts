// The native tool source: exec/read/write/edit/glob/grep, all executed inside the run's box session.
import { z } from 'zod';
import type { JsonObject } from '../protocol/event.js';
import type { MountSpec } from '../box/model.js';
import { globMatcherSource } from './glob.js';
import { NATIVE_TOOLS, NATIVE_TOOL_NAMES, type NativeToolName } from './native-defs.js';
import { ToolError, WORKSPACE, resolveWorkspacePath } from './paths.js';
import { translatePattern } from './regex.js';
import type { ToolCallContext, ToolDefinition, ToolSource } from './types.js';
import { firstIssue } from '../zod-issue.js';

export const READ_MAX_BYTES = 51_200;
export const GLOB_MAX_RESULTS = 100;
export const GREP_MAX_MATCHES = 200;
export const GREP_MAX_FILES = 5000;

/** A file operation the sandbox-side helper performs (paths are already normalised under /workspace). */
export type FileOp =
  | { op: 'read'; path: string; offset: number | null; limit: number | null; max_bytes: number }
  | { op: 'write'; path: string; content: string; append: boolean }
  | { op: 'edit'; path: string; old_string: string; new_string: string }
  | { op: 'glob'; path: string; match: string; max: number }
  | { op: 'grep'; path: string; source: string; flags: string; include: string; max_matches: number; max_files: number };

/** The run's box session: its id and the extra mounts it is created with (skill packages, read-only). */
export type ToolSession = { id: string; extra_mounts?: readonly MountSpec[] };

/** What the native tools need from the box (implemented in runtime/tools on the box service). */
export interface BoxToolPort {
  /** Whether a box backend is usable right now (cached briefly). */
  available(): Promise<boolean>;
  exec(
    session: ToolSession,
    req: { command: string; workdir?: string; timeout_sec?: number; env?: Record<string, string> },
    ctx: ToolCallContext,
  ): Promise<unknown>;
  fileOp(session: ToolSession, op: FileOp, ctx: ToolCallContext): Promise<JsonObject>;
}

const ExecParams = z.strictObject({
  command: z.string(),
  workdir: z.string().optional(),
  timeout_sec: z.number().int().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
  description: z.string().optional(),
});
const ReadParams = z.strictObject({ path: z.string(), offset: z.number().int().min(1).optional(), limit: z.number().int().min(1).optional() });
const WriteParams = z.strictObject({ path: z.string(), content: z.string(), mode: z.enum(['overwrite', 'append']).optional() });
const EditParams = z.strictObject({ path: z.string(), old_string: z.string(), new_string: z.string() });
const GlobParams = z.strictObject({ pattern: z.string().min(1), path: z.string().optional() });
const GrepParams = z.strictObject({ pattern: z.string(), path: z.string().optional(), include: z.string().optional() });

function parse<S extends z.ZodType>(schema: S, tool: string, params: JsonObject): z.output<S> {
  const r = schema.safeParse(params);
  if (r.success) return r.data;
  throw new ToolError(`Invalid parameters for ${tool}: ${firstIssue(r.error, 'parameters').text}`);
}

function isNative(name: string): name is NativeToolName {
  return (NATIVE_TOOL_NAMES as readonly string[]).includes(name);
}

/** The native tools of one run: bound to its box session id; absent when no box backend is usable. */
export class NativeToolSource implements ToolSource {
  readonly kind = 'native' as const;
  readonly owner = 'native';

  constructor(
    readonly port: BoxToolPort,
    readonly session: ToolSession,
  ) {}

  async list(): Promise<ToolDefinition[]> {
    return (await this.port.available()) ? NATIVE_TOOL_NAMES.map((n) => NATIVE_TOOLS[n]) : [];
  }

  async call(name: string, params: JsonObject, ctx: ToolCallContext): Promise<unknown> {
    if (!isNative(name)) throw new ToolError(`Tool not found: ${name}`);
    const sid = this.session;
    switch (name) {
      case 'exec': {
        const p = parse(ExecParams, name, params);
        const workdir = p.workdir === undefined ? undefined : resolveWorkspacePath(p.workdir);
        return this.port.exec(
          sid,
          { command: p.command, ...(workdir ? { workdir } : {}), ...(p.timeout_sec ? { timeout_sec: p.timeout_sec } : {}), ...(p.env ? { env: p.env } : {}) },
          ctx,
        );
      }
      case 'read': {
        const p = parse(ReadParams, name, params);
        return this.port.fileOp(
          sid,
          { op: 'read', path: resolveWorkspacePath(p.path), offset: p.offset ?? null, limit: p.limit ?? null, max_bytes: READ_MAX_BYTES },
          ctx,
        );
      }
      case 'write': {
        const p = parse(WriteParams, name, params);
        const target = resolveWorkspacePath(p.path);
        if (target === WORKSPACE) throw new ToolError('write needs a file path under /workspace, not the workspace itself.');
        return this.port.fileOp(sid, { op: 'write', path: target, content: p.content, append: p.mode === 'append' }, ctx);
      }
      case 'edit': {
        const p = parse(EditParams, name, params);
        if (p.old_string === '') return { ok: false, error: 'old_string must not be empty.' };
        return this.port.fileOp(sid, { op: 'edit', path: resolveWorkspacePath(p.path), old_string: p.old_string, new_string: p.new_string }, ctx);
      }
      case 'glob': {
        const p = parse(GlobParams, name, params);
        return this.port.fileOp(sid, { op: 'glob', path: resolveWorkspacePath(p.path), match: globMatcherSource(p.pattern), max: GLOB_MAX_RESULTS }, ctx);
      }
      case 'grep': {
        const p = parse(GrepParams, name, params);
        const where = resolveWorkspacePath(p.path);
        let re: { source: string; flags: string };
        try {
          re = translatePattern(p.pattern);
        } catch (err) {
          return { ok: false, error: err instanceof Error ? err.message : String(err) };
        }
        return this.port.fileOp(
          sid,
          {
            op: 'grep',
            path: where,
            source: re.source,
            flags: re.flags,
            include: globMatcherSource(p.include ?? '*'),
            max_matches: GREP_MAX_MATCHES,
            max_files: GREP_MAX_FILES,
          },
          ctx,
        );
      }
    }
  }
}
