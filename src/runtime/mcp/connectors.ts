// How a session reaches its server: a host stdio process in its own group, legacy HTTP+SSE or
// Streamable HTTP through the SDK transports (skills-mcp-tools.md §3.2). In-box stdio lives in box-connector.ts.
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerRecord } from './config.js';
import type { DirectToolCalls } from './direct-call.js';
import { LbotError } from '../../core/errors.js';
import { McpPhaseError, type McpErrorPhase } from './errors.js';
import { authRequired, LbotOAuthProvider, missingScope, recordChallenges } from './oauth-provider.js';
import { OAuthStore } from './oauth-store.js';
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
  /** tools/call past the SDK's Protocol, where the transport offers it (host stdio). */
  direct?: DirectToolCalls;
  /** Extra cleanup once the transport is closed (stopping a managed process). */
  dispose?(): Promise<void>;
  /** Names an authorization failure (mcp.auth_required / mcp.auth_failed) in an error of this connection. */
  authError?(err: unknown): LbotError | null;
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
    direct: transport.direct,
  };
}

/** Walks an error and its causes. */
function* causes(err: unknown): Generator<unknown> {
  for (let e = err, depth = 0; e !== undefined && depth < 8; depth++) {
    yield e;
    e = e instanceof Error ? e.cause : undefined;
  }
}

/** The HTTP status the SDK transports keep in their errors' `code`. */
function httpStatus(err: unknown): number | null {
  for (const e of causes(err)) if ((e instanceof StreamableHTTPError || e instanceof SseError) && typeof e.code === 'number') return e.code;
  return null;
}

function hasStaticAuthorization(record: McpServerRecord): boolean {
  return Object.keys(record.headers).some((k) => k.toLowerCase() === 'authorization');
}

/**
 * Legacy HTTP+SSE or Streamable HTTP with the configured static headers. Without a static
 * Authorization header, OAuth runs on the SDK's client auth with the tokens `lbot mcp login` stored
 * (refreshed when the server answers 401); a flow that needs the user fails with mcp.auth_required.
 */
export function remoteConnector(dataDir: string): McpConnector {
  return async (record) => {
    if (!record.url) throw new McpPhaseError('mcp_init', `MCP server ${record.name} has no url`);
    const url = new URL(record.url);
    const requestInit: RequestInit = { headers: { ...record.headers } };
    const oauth = hasStaticAuthorization(record)
      ? null
      : new LbotOAuthProvider(record, new OAuthStore(dataDir, record.name, record.url), { kind: 'background' });
    const opts = { requestInit, ...(oauth ? { authProvider: oauth, fetch: recordChallenges(oauth.store, record.url) } : {}) };
    const transport: Transport = record.transport === 'sse' ? new SSEClientTransport(url, opts) : new StreamableHTTPClientTransport(url, opts);
    return {
      transport,
      pid: null,
      stderrTail: () => '',
      exitNote: () => null,
      transportFailure: () => null,
      handshakePhase: 'mcp_init',
      authError: (err) => remoteAuthError(record, oauth?.store ?? null, err),
    };
  };
}

function remoteAuthError(record: McpServerRecord, store: OAuthStore | null, err: unknown): LbotError | null {
  for (const e of causes(err))
    if (e instanceof LbotError && (e.code === 'mcp.auth_required' || e.code === 'mcp.auth_failed' || e.code === 'mcp.invalid_config')) return e;
  const status = httpStatus(err) ?? (causes(err).next().value instanceof UnauthorizedError ? 401 : null);
  if (status !== 401 && status !== 403) return null;
  const name = record.name;
  if (!store) {
    return new LbotError('mcp.auth_failed', `MCP server ${name} refused the configured Authorization header (HTTP ${status})`, {
      details: { name, status },
      hint: `check the --header value, or remove the header and run lbot mcp login ${name} for OAuth`,
    });
  }
  const step = missingScope(store);
  if (status === 403 && step && step.missing.length === 0) {
    return new LbotError(
      'mcp.auth_failed',
      `MCP server ${name} still refuses scope "${step.wanted}" (HTTP 403 insufficient_scope) although the last login was granted it`,
      {
        details: { name, status, scope: step.wanted },
        hint: 'the server will not accept this scope for this account; ask its operator',
      },
    );
  }
  if (step) return authRequired(name, `the server asks for scope "${step.wanted}" (HTTP 403 insufficient_scope)`);
  return authRequired(name, `the server answered HTTP ${status}`);
}
