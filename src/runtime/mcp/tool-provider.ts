// MCP tools as a run's `ToolProvider` (core/host/ports.ts): a per-run snapshot of the named tool table,
// calls bounded by the run deadline, and MCP failures turned into the runner-facing API errors.
import { ApiError } from '../../core/host/api-error.js';
import type { ToolDescriptor, ToolProvider } from '../../core/host/ports.js';
import type { Binding } from '../../core/protocol/binding.js';
import type { JsonObject } from '../../core/protocol/event.js';
import { McpCallError } from './errors.js';
import type { McpManager } from './manager.js';
import { RESERVED_TOOL_NAMES, type McpToolEntry } from './tool-names.js';

export type McpToolProviderOptions = {
  /** The run's deadline, epoch seconds, or null (read at call time). */
  deadlineOf(run_id: string): number | null;
  /** Names other tool sources hold in this run (native, skill, plugin). */
  taken?: ReadonlySet<string>;
  now?: () => number;
};

/** Whether a binding can be granted any MCP tool at all; if not, no server needs to be started. */
export function bindingMayUseMcp(binding: Pick<Binding, 'resource_policy'>): boolean {
  const allowed = binding.resource_policy.allowed_tool_names ?? [];
  const denied = new Set(binding.resource_policy.denied_tool_names);
  return allowed.some((name) => !denied.has(name) && !RESERVED_TOOL_NAMES.has(name));
}

/** The runner-facing error of a failed MCP call (AC-158: runtime_error with details.phase tool_call). */
export function toApiError(err: McpCallError): ApiError {
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
  }
}

/** Calls one table entry with the per-call timeout cut down to what is left of the run. */
export async function callMcpEntry(
  manager: McpManager,
  entry: McpToolEntry,
  parameters: JsonObject,
  ctx: { run_id: string; signal: AbortSignal },
  opts: McpToolProviderOptions,
): Promise<unknown> {
  const now = opts.now ?? Date.now;
  const callMs = manager.settings.call_timeout_sec * 1000;
  const deadline = opts.deadlineOf(ctx.run_id);
  const leftMs = deadline === null ? Number.POSITIVE_INFINITY : deadline * 1000 - now();
  if (leftMs <= 0) throw new ApiError('deadline_exceeded', 'the run deadline has passed', 'run_deadline', { phase: 'tool_call', server: entry.server, tool: entry.tool });
  const session = manager.get(entry.server);
  if (!session) {
    throw new ApiError('runtime_error', `MCP server ${entry.server} was removed`, 'mcp_not_connected', { phase: 'tool_call', server: entry.server, tool: entry.tool });
  }
  try {
    return await session.callTool(entry.tool, parameters, { signal: ctx.signal, timeoutMs: Math.max(1, Math.min(callMs, leftMs)), deadline: leftMs < callMs });
  } catch (err) {
    if (err instanceof McpCallError) throw toApiError(err);
    throw err;
  }
}

/** The MCP part of a run's tool table, fixed when the run starts (list_changed affects later runs). */
export async function createMcpToolProvider(manager: McpManager, binding: Pick<Binding, 'resource_policy'>, opts: McpToolProviderOptions): Promise<ToolProvider & { entries: readonly McpToolEntry[] }> {
  const entries = bindingMayUseMcp(binding) ? await manager.toolTable(opts.taken) : [];
  const byName = new Map(entries.map((e) => [e.exposed, e]));
  const descriptors: ToolDescriptor[] = entries.map((e) => e.descriptor);
  return {
    entries,
    list: () => Promise.resolve(descriptors),
    call: (name, parameters, ctx) => {
      const entry = byName.get(name);
      if (!entry) return Promise.reject(new ApiError('not_found', `Tool not found: ${name}`, 'tool_not_found', { tool_name: name }));
      return callMcpEntry(manager, entry, parameters, ctx, opts);
    },
  };
}
