// Error values of the MCP client: a failed connection step with its phase (skills-mcp-tools.md §3.1),
// and a failed tool call with the reason the host maps to a runner-facing code.
import type { LbotError } from '../../core/errors.js';

export const MCP_ERROR_PHASES = [
  'session_create',
  'dep_install',
  'process_start',
  'relay_connect',
  'mcp_init',
  'runtime',
  'tool_call',
  'box_unavailable',
] as const;
export type McpErrorPhase = (typeof MCP_ERROR_PHASES)[number];

/** A connection step failed; `phase` goes to the runtime info as `error_phase`. */
export class McpPhaseError extends Error {
  override name = 'McpPhaseError';
  /** An authorization failure: retrying cannot help, the user has to act (lbot mcp login). */
  readonly auth: LbotError | undefined;
  constructor(
    readonly phase: McpErrorPhase,
    message: string,
    options?: { cause?: unknown; auth?: LbotError },
  ) {
    super(message, options);
    this.auth = options?.auth;
  }
}

export type McpCallFailure =
  /** The session is not connected (starting, failed, disabled). */
  | 'not_connected'
  /** The server went away while the call was in flight. */
  | 'connection_lost'
  /** The per-call timeout elapsed. */
  | 'timeout'
  /** The run deadline bounded the call and elapsed. */
  | 'deadline'
  /** The caller gave up (run cancelled, runner disconnected). */
  | 'cancelled'
  /** The server answered with a JSON-RPC error (unknown tool, bad arguments). */
  | 'protocol'
  /** The tool ran and reported `isError`. */
  | 'tool_error'
  /** The server wants (other) authorization: mcp.auth_required / mcp.auth_failed. */
  | 'unauthorized';

/** A `tools/call` that did not produce a result. */
export class McpCallError extends Error {
  override name = 'McpCallError';
  constructor(
    readonly failure: McpCallFailure,
    message: string,
    readonly server: string,
    readonly tool: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A server's line went over the cap (core/protocol/lines.ts); lbot stops reading from it. */
export class LineTooLongError extends Error {
  override name = 'LineTooLongError';
  constructor(readonly limit: number) {
    super(`the server sent a message line longer than ${limit} bytes; lbot stops reading from it`);
  }
}
