// MCP servers as tool sources of the tool manager (core/tools): one source per connected server, calls
// bounded by the run deadline, and MCP failures turned into the runner-facing API errors (AC-158, AC-161).
import { ApiError } from '../../core/host/api-error.js';
import type { Binding } from '../../core/protocol/binding.js';
import type { JsonObject } from '../../core/protocol/event.js';
import { HOST_TOOL_NAMES } from '../../core/tools/native-defs.js';
import type { ToolCallContext, ToolDefinition, ToolSource } from '../../core/tools/types.js';
import { McpCallError } from './errors.js';
import type { McpSession } from './session.js';

export type McpSourceOptions = {
  /** `mcp.call_timeout_sec` in milliseconds. */
  callTimeoutMs: number;
  /** Expose every tool as `<server>__<tool>` (`mcp.tool_name_prefix`). */
  prefixAll: boolean;
  /** The run's deadline, epoch seconds, or null (read at call time). */
  deadlineOf(run_id: string): number | null;
  now?: () => number;
};

/** Whether a binding can be granted any MCP tool at all; if not, no server needs to be started for it. */
export function bindingMayUseMcp(binding: Pick<Binding, 'resource_policy'>): boolean {
  const allowed = binding.resource_policy.allowed_tool_names ?? [];
  const denied = new Set(binding.resource_policy.denied_tool_names);
  return allowed.some((name) => !denied.has(name) && !HOST_TOOL_NAMES.has(name));
}

/** The runner-facing error of a failed MCP call: details carry phase tool_call, the server and the tool. */
export function mcpCallApiError(err: McpCallError): ApiError {
  const extra = { phase: 'tool_call', server: err.server, tool: err.tool };
  switch (err.failure) {
    case 'deadline':
      return new ApiError('deadline_exceeded', err.message, 'run_deadline', extra);
    case 'timeout':
      return new ApiError('runtime_error', err.message, 'mcp_timeout', extra, true);
    case 'not_connected':
      return new ApiError('runtime_error', err.message, 'mcp_not_connected', extra, true);
    case 'connection_lost':
      return new ApiError('runtime_error', err.message, 'mcp_connection_lost', extra, true);
    case 'cancelled':
      return new ApiError('runtime_error', err.message, 'cancelled', extra);
    case 'protocol':
      return new ApiError('runtime_error', err.message, 'mcp_protocol_error', extra);
    case 'tool_error':
      return new ApiError('runtime_error', err.message, 'tool_error', extra);
    case 'unauthorized':
      return new ApiError('unauthorized', err.message, 'mcp_auth_required', extra);
  }
}

/** One server's tools, as the tool manager sees them; names clash-qualify as `<server>__<tool>` there. */
export class McpToolSource implements ToolSource {
  readonly kind = 'mcp' as const;
  readonly #byExposed = new Map<string, string>();

  constructor(
    readonly session: Pick<McpSession, 'name' | 'tools' | 'callTool'>,
    readonly opts: McpSourceOptions,
  ) {}

  get owner(): string {
    return this.session.name;
  }

  async list(): Promise<ToolDefinition[]> {
    this.#byExposed.clear();
    return this.session.tools.map((t) => {
      const name = this.opts.prefixAll ? `${this.owner}__${t.name}` : t.name;
      this.#byExposed.set(name, t.name);
      return {
        name,
        description: t.description,
        human_desc: t.description,
        parameters: t.inputSchema,
        ...(t.title !== undefined ? { title: t.title } : {}),
        ...(t.annotations !== undefined ? { annotations: t.annotations } : {}),
        ...(t.outputSchema !== undefined ? { output_schema: t.outputSchema } : {}),
      };
    });
  }

  async call(name: string, params: JsonObject, ctx: ToolCallContext): Promise<unknown> {
    const tool = this.#byExposed.get(name) ?? name;
    const extra = { phase: 'tool_call', server: this.owner, tool };
    const now = this.opts.now ?? Date.now;
    const deadline = this.opts.deadlineOf(ctx.run_id);
    const leftMs = deadline === null ? Number.POSITIVE_INFINITY : deadline * 1000 - now();
    if (leftMs <= 0) throw new ApiError('deadline_exceeded', 'the run deadline has passed', 'run_deadline', extra);
    const callMs = this.opts.callTimeoutMs;
    try {
      return await this.session.callTool(tool, params, { signal: ctx.signal, timeoutMs: Math.max(1, Math.min(callMs, leftMs)), deadline: leftMs < callMs });
    } catch (err) {
      if (err instanceof McpCallError) throw mcpCallApiError(err);
      throw err;
    }
  }
}
