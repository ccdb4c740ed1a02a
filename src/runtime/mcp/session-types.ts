// What an MCP session reports (McpRuntimeInfo, skills-mcp-tools.md §3.1) and the options it starts with.
import type { JsonObject } from '../../core/protocol/event.js';
import type { McpConnector } from './connectors.js';
import type { ElicitationMode, ElicitationPrompt } from './client-capabilities.js';
import type { McpErrorPhase } from './errors.js';
import type { Sampler } from './sampling.js';

export type McpStatus = 'idle' | 'disabled' | 'connecting' | 'connected' | 'error' | 'closed';

/** `McpRuntimeInfo` (§3.1) plus lbot's fields (pid, timings, next retry). */
export type McpRuntimeInfo = {
  status: McpStatus;
  error_message: string | null;
  error_phase: McpErrorPhase | null;
  /** mcp.auth_required / mcp.auth_failed when authorization stopped the session; its hint names the command. */
  error_code: string | null;
  error_hint: string | null;
  retry_count: number;
  tool_count: number;
  tools: Array<{ name: string; description: string; parameters: JsonObject }>;
  pid: number | null;
  server_info: { name: string; version: string } | null;
  instructions: string | null;
  connected_at: string | null;
  next_retry_at: string | null;
  timings: { connect_ms: number | null; list_tools_ms: number | null };
  box_session_id?: string;
  box_enabled?: true;
};

export type SessionOptions = {
  connector: McpConnector;
  /** Start budget: how long start() may take before the session gives up (30 s; box: startup + 30 s). */
  startTimeoutMs: number;
  retryDelaysMs: readonly number[];
  /** A connection that stayed up this long gets a fresh attempt budget. */
  healthyResetMs?: number;
  /** Ping interval of remote servers (their only crash signal). */
  pingIntervalMs?: number;
  transient?: boolean;
  log?: (message: string) => void;
  onChange?: () => void;
  /** How `elicitation/create` is answered (lbot serve: not declared). */
  elicitation?: ElicitationMode;
  prompt?: ElicitationPrompt;
  /** Answers `sampling/createMessage` with the model granted to the server; absent → refused. */
  sampler?: Sampler | null;
};
