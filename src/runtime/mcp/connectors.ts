// How a session reaches its server: a host stdio process in its own group, legacy HTTP+SSE or
// Streamable HTTP through the SDK transports (skills-mcp-tools.md §3.2). In-box stdio lives in box-connector.ts.
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerRecord } from './config.js';
import { McpPhaseError, type McpErrorPhase } from './errors.js';
import { ProcessGroupStdioTransport, StdioTransportError } from './stdio-transport.js';

/** One live link to a server, before and after the MCP handshake. */
export type McpConnection = {
  transport: Transport;
  /** Host pid (and process group) of a stdio server. */
  pid: number | null;
  stderrTail(): string;
  /** How the server process ended ("exited with code 1"), once it has; null while it runs or for remote servers. */
  exitNote(): string | null;
  /** Why the transport itself gave up, if it did (an oversized line). */
  transportFailure(): string | null;
  /** The phase a failed handshake is blamed on when the process did not exit. */
  handshakePhase: McpErrorPhase;
  /** The box session a box-hosted server runs in. */
  box?: { session_id: string; process_id: string };
  /** Extra cleanup once the transport is closed (stopping a managed process). */
  dispose?(): Promise<void>;
};

export type ConnectOptions = { signal: AbortSignal; transient: boolean; onStderrLine?: (line: string) => void };

export type McpConnector = (record: McpServerRecord, opts: ConnectOptions) => Promise<McpConnection>;

function describeExit(exit: { code: number | null; signal: NodeJS.Signals | null } | null): string | null {
  if (!exit) return null;
  if (exit.signal) return `was killed by ${exit.signal}`;
  return exit.code === null ? 'could not be started' : `exited with code ${exit.code}`;
}

/** Spawns a host stdio server; a spawn failure is phase process_start. */
export async function connectHostStdio(record: McpServerRecord, opts: ConnectOptions): Promise<McpConnection> {
  const command = record.command ?? [];
  const transport = new ProcessGroupStdioTransport({
    command,
    env: record.env,
    cwd: record.cwd,
    ...(opts.onStderrLine ? { onStderrLine: opts.onStderrLine } : {}),
  });
  try {
    await transport.start();
  } catch (err) {
    const reason = err instanceof StdioTransportError ? err.message : String(err);
    throw new McpPhaseError('process_start', `MCP server ${record.name}: ${reason}`, { cause: err });
  }
  return {
    transport,
    pid: transport.pid,
    stderrTail: () => transport.stderrTail(),
    exitNote: () => describeExit(transport.exitInfo),
    transportFailure: () => transport.failure?.message ?? null,
    handshakePhase: 'mcp_init',
  };
}

/** Legacy HTTP+SSE or Streamable HTTP with the configured static headers. */
export async function connectRemote(record: McpServerRecord): Promise<McpConnection> {
  if (!record.url) throw new McpPhaseError('mcp_init', `MCP server ${record.name} has no url`);
  const url = new URL(record.url);
  const requestInit: RequestInit = { headers: { ...record.headers } };
  const transport: Transport = record.transport === 'sse' ? new SSEClientTransport(url, { requestInit }) : new StreamableHTTPClientTransport(url, { requestInit });
  return {
    transport,
    pid: null,
    stderrTail: () => '',
    exitNote: () => null,
    transportFailure: () => null,
    handshakePhase: 'mcp_init',
  };
}
