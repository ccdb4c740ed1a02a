// How a failed MCP call or handshake reads: the coded error, its phase, and what the server left behind
// (its exit, its stderr tail, an authorization refusal).
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpConnection } from './connectors.js';
import { McpCallError, McpPhaseError } from './errors.js';
import { flattenError } from './results.js';

/** A failed tools/call as the McpCallError its caller sees. */
export function callError(
  err: unknown,
  tool: string,
  opts: { signal?: AbortSignal | undefined; timeoutMs: number; deadline?: boolean },
  session: { name: string; conn: McpConnection | null; connected: boolean; redact(text: string): string },
): McpCallError {
  if (err instanceof McpCallError) return err;
  const auth = session.conn?.authError?.(err);
  if (auth) return new McpCallError('unauthorized', `${auth.message}${auth.hint ? ` (${auth.hint})` : ''}`, session.name, tool, { cause: auth });
  if (opts.signal?.aborted)
    return new McpCallError('cancelled', `the call of ${tool} on MCP server ${session.name} was cancelled`, session.name, tool, { cause: err });
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
    const secs = Math.round(opts.timeoutMs / 100) / 10;
    return opts.deadline
      ? new McpCallError(
          'deadline',
          `the call of ${tool} on MCP server ${session.name} was stopped at the run deadline (${secs}s left when it started)`,
          session.name,
          tool,
          { cause: err },
        )
      : new McpCallError('timeout', `the call of ${tool} on MCP server ${session.name} timed out after ${secs}s (mcp.call_timeout_sec)`, session.name, tool, {
          cause: err,
        });
  }
  if ((err instanceof McpError && err.code === ErrorCode.ConnectionClosed) || !session.connected) {
    const exit = session.conn?.exitNote() ?? null;
    return new McpCallError(
      'connection_lost',
      `MCP server ${session.name} went away during the call of ${tool}${exit ? ` (the server process ${exit})` : ''}`,
      session.name,
      tool,
      { cause: err },
    );
  }
  return new McpCallError('protocol', session.redact(`MCP server ${session.name} refused tools/call ${tool}: ${flattenError(err)}`), session.name, tool, {
    cause: err,
  });
}

/** Names the phase of a failed handshake: a process that exited did not start; otherwise the handshake failed. */
export function handshakeError(name: string, err: unknown, conn: McpConnection, budgetSecs: number): McpPhaseError {
  const stderrNote = stderrTailNote(conn);
  const exit = conn.exitNote();
  const transportFailure = conn.transportFailure();
  if (transportFailure) return new McpPhaseError('mcp_init', `MCP server ${name}: ${transportFailure}`, { cause: err });
  const auth = conn.authError?.(err);
  if (auth) return new McpPhaseError('mcp_init', `${auth.message}${auth.hint ? ` (${auth.hint})` : ''}`, { cause: err, auth });
  if (exit) return new McpPhaseError('process_start', `MCP server ${name} ${exit} before completing the MCP handshake${stderrNote}`, { cause: err });
  if (err instanceof McpPhaseError) return new McpPhaseError(err.phase, `${err.message}${stderrNote}`, { cause: err });
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
    return new McpPhaseError(conn.handshakePhase, `connection timeout: MCP server ${name} did not answer within ${budgetSecs}s${stderrNote}`, {
      cause: err,
    });
  }
  return new McpPhaseError(conn.handshakePhase, `MCP server ${name}: ${flattenError(err)}${stderrNote}`, { cause: err });
}

/** What ended a live connection: the transport's failure, the process's exit, or a lost connection. */
export function connectionLostError(name: string, conn: McpConnection): McpPhaseError {
  const exit = conn.exitNote();
  const what =
    conn.transportFailure() ??
    (exit ? `the server process ${exit} unexpectedly` : conn.box ? 'Box managed process exited unexpectedly' : 'the connection to the server was lost');
  return new McpPhaseError('runtime', `MCP server ${name}: ${what}${stderrTailNote(conn)}`);
}

/** The last ten lines of the server's stderr, as a note to append; empty when it wrote none. */
function stderrTailNote(conn: McpConnection): string {
  const stderr = conn.stderrTail().trim();
  return stderr ? `; stderr: ${stderr.split('\n').slice(-10).join('\n')}` : '';
}
