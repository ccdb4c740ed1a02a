// Host side of the MCP bridge (runner-protocol.md §10.7): a unix socket per host process where
// `lbot mcp bridge` connects with a run id and that run's token, and then speaks MCP. Its tools are the
// run's host API, and every call goes through the host's proxy router, so grants and audit are the same
// as for the runner's own calls. A run's token dies with the run; so do its bridge connections.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { packagePath } from '../../package-root.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ApiError, toApiError } from '../../core/host/api-error.js';
import type { ProxyCall } from '../../core/host/ports.js';
import type { RunSession } from '../../core/host/session.js';
import { isRecord, tryParseJson } from '../../core/json.js';
import type { JsonObject } from '../../core/protocol/event.js';
import { LBOT_VERSION } from '../../package-root.js';
import { ensureSocketDir, tmpSocketDir } from '../socket-dir.js';
import { BRIDGE_TOOLS, type BridgeTool } from './bridge-tools.js';

const MAX_SOCKET_PATH = 100;
const AUTH_TIMEOUT_MS = 5000;
const AUTH_MAX_BYTES = 4096;
const SWEEP_MS = 250;
export const LBOT_BIN = packagePath('bin', 'lbot.js');

export const BridgeHelloSchema = z.strictObject({ run_id: z.string().min(1), token: z.string().min(1) });
export const BridgeReplySchema = z.union([
  z.strictObject({ ok: z.literal(true) }),
  z.strictObject({ ok: z.literal(false), error: z.strictObject({ code: z.string(), message: z.string() }) }),
]);

export type BridgeHostPort = {
  /** Routes one proxy call with the router's authorization and audit. */
  handle(call: ProxyCall): Promise<unknown>;
  /** The live session of a run, or undefined once it has ended. */
  session(run_id: string): RunSession | undefined;
};

/** What a runner finds in `ctx.metadata.mcp_bridge`: how to start `lbot mcp bridge` for its harness. */
export type BridgeEndpoint = { socket: string; token: string; command: string[]; env: Record<string, string> };

function hash(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

const TOKEN_BYTES = 32;
/** Tokens are cut from one CSPRNG draw per 64 runs (as `randomUUID` pools its own): serve issues one every run. */
let tokenPool = Buffer.alloc(0);
let tokenAt = 0;
function newToken(): string {
  if (tokenAt + TOKEN_BYTES > tokenPool.length) {
    tokenPool = randomBytes(TOKEN_BYTES * 64);
    tokenAt = 0;
  }
  const token = tokenPool.subarray(tokenAt, tokenAt + TOKEN_BYTES);
  tokenAt += TOKEN_BYTES;
  return token.toString('base64url');
}

/** The socket path of this process: under the data dir when it fits in sockaddr_un, else under `<tmp>/lbot-<uid>`. */
export function bridgeSocketPath(dataDir: string, pid: number = process.pid): string {
  const local = path.join(dataDir, 'mcp', 'bridge', `${pid}.sock`);
  if (local.length <= MAX_SOCKET_PATH) return local;
  const key = createHash('sha256')
    .update(`${path.resolve(dataDir)}\n${pid}`)
    .digest('hex')
    .slice(0, 16);
  return path.join(tmpSocketDir(), `bridge-${key}.sock`);
}

const schemas = new Map<string, z.ZodType>();

/** The zod form of a bridge tool's declared input schema: what the tool lists is what it enforces. */
function argumentSchema(tool: BridgeTool): z.ZodType {
  let schema = schemas.get(tool.name);
  if (!schema) {
    schema = z.fromJSONSchema(tool.inputSchema);
    schemas.set(tool.name, schema);
  }
  return schema;
}

function textResult(value: unknown, isError = false): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], ...(isError ? { isError: true } : {}) };
}

export class BridgeServer {
  readonly socketPath: string;
  readonly #port: BridgeHostPort;
  readonly #warn: (message: string) => void;
  readonly #sweepMs: number;
  readonly #tokens = new Map<string, Buffer>();
  readonly #conns = new Map<string, Set<net.Socket>>();
  #server: net.Server | null = null;
  #sweep: NodeJS.Timeout | null = null;
  #closed = false;

  /** `sweepMs`: how often ended runs lose their tokens and connections (tests widen the gap to probe it). */
  constructor(opts: { dataDir: string; port: BridgeHostPort; warn(message: string): void; sweepMs?: number }) {
    this.socketPath = bridgeSocketPath(opts.dataDir);
    this.#port = opts.port;
    this.#warn = opts.warn;
    this.#sweepMs = opts.sweepMs ?? SWEEP_MS;
  }

  /** Issues the token of a starting run and returns its endpoint (listening starts on first use). */
  register(run_id: string): BridgeEndpoint {
    this.#listen();
    const token = newToken();
    this.#tokens.set(run_id, hash(token));
    this.#startSweep();
    return {
      socket: this.socketPath,
      token,
      command: [process.execPath, LBOT_BIN, 'mcp', 'bridge', '--run', run_id],
      env: { LBOT_BRIDGE_SOCKET: this.socketPath, LBOT_BRIDGE_TOKEN: token },
    };
  }

  #listen(): void {
    if (this.#server || this.#closed) return;
    // Created 0700, or refused when it is a symlink, another user's or open to others (mcp.connect_failed).
    const dir = path.dirname(this.socketPath);
    ensureSocketDir(dir, 'mcp.connect_failed', { parents: dir !== tmpSocketDir() });
    rmSync(this.socketPath, { force: true });
    const server = net.createServer((socket) => this.#accept(socket));
    server.on('error', (err) => this.#warn(`MCP bridge socket ${this.socketPath}: ${err.message}`));
    server.listen(this.socketPath);
    server.unref();
    this.#server = server;
  }

  /** Drops tokens and connections of runs that have ended. */
  #startSweep(): void {
    if (this.#sweep) return;
    this.#sweep = setInterval(() => {
      for (const run_id of [...this.#tokens.keys()]) if (!this.#port.session(run_id)) this.#revoke(run_id);
      if (this.#tokens.size === 0 && this.#sweep) {
        clearInterval(this.#sweep);
        this.#sweep = null;
      }
    }, this.#sweepMs);
    this.#sweep.unref();
  }

  #revoke(run_id: string): void {
    this.#tokens.delete(run_id);
    for (const s of this.#conns.get(run_id) ?? []) s.destroy();
    this.#conns.delete(run_id);
  }

  #accept(socket: net.Socket): void {
    let buffered = Buffer.alloc(0);
    const refuse = (code: string, message: string) => {
      socket.end(`${JSON.stringify({ ok: false, error: { code, message } })}\n`);
      setTimeout(() => socket.destroy(), 1000).unref();
    };
    const timer = setTimeout(() => refuse('invalid_argument', 'no bridge hello within 5 s'), AUTH_TIMEOUT_MS);
    timer.unref();
    socket.on('error', () => undefined);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const nl = buffered.indexOf(0x0a);
      if (nl === -1) {
        if (buffered.length > AUTH_MAX_BYTES) {
          socket.off('data', onData);
          clearTimeout(timer);
          refuse('invalid_argument', 'the bridge hello is too long');
        }
        return;
      }
      socket.off('data', onData);
      socket.pause();
      clearTimeout(timer);
      const rest = buffered.subarray(nl + 1);
      const hello = BridgeHelloSchema.safeParse(tryParseJson(buffered.subarray(0, nl).toString('utf8')));
      if (!hello.success) return refuse('invalid_argument', 'the bridge hello must be {"run_id", "token"}');
      const { run_id, token } = hello.data;
      const expected = this.#tokens.get(run_id);
      const session = this.#port.session(run_id);
      if (!expected || !timingSafeEqual(expected, hash(token)) || !session) {
        return refuse('unauthorized', `run ${run_id} is not live in this lbot process, or the bridge token does not belong to it`);
      }
      socket.write(`${JSON.stringify({ ok: true })}\n`);
      if (rest.length > 0) socket.unshift(rest);
      this.#serve(socket, run_id); // resumes the socket once the MCP server listens on it
    };
    socket.on('data', onData);
  }

  #serve(socket: net.Socket, run_id: string): void {
    const set = this.#conns.get(run_id) ?? new Set<net.Socket>();
    set.add(socket);
    this.#conns.set(run_id, set);
    // The MCP server side is loaded on the first bridge connection, not by every lbot process.
    void this.#mcpServer(socket, run_id, set).catch((err: unknown) => {
      this.#warn(`MCP bridge for run ${run_id}: ${err instanceof Error ? err.message : String(err)}`);
      socket.destroy();
    });
  }

  async #mcpServer(socket: net.Socket, run_id: string, set: Set<net.Socket>): Promise<void> {
    const [{ Server }, { StdioServerTransport }, { CallToolRequestSchema, ListToolsRequestSchema }] = await Promise.all([
      import('@modelcontextprotocol/sdk/server/index.js'),
      import('@modelcontextprotocol/sdk/server/stdio.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
    const server = new Server(
      { name: 'lbot-bridge', version: LBOT_VERSION },
      {
        capabilities: { tools: {} },
        instructions: `The lbot host API of run ${run_id}: read the current event and the conversation history, keep state, and call the tools this run was granted. Calls are refused once the run has ended.`,
      },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: BRIDGE_TOOLS.map(({ name, description, inputSchema, annotations }) => ({ name, description, inputSchema, annotations })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = BRIDGE_TOOLS.find((t) => t.name === request.params.name);
      if (!tool) return textResult({ error: { code: 'not_found', message: `unknown bridge tool ${request.params.name}` } }, true);
      return this.#call(run_id, tool, request.params.arguments ?? {}, extra.signal);
    });
    const transport = new StdioServerTransport(socket, socket);
    socket.on('close', () => {
      set.delete(socket);
      void server.close().catch(() => undefined);
    });
    await server.connect(transport);
    socket.resume();
  }

  async #call(run_id: string, tool: BridgeTool, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const session = this.#port.session(run_id);
    // In the gap between the run's end and the sweep closing this connection, the run is gone.
    if (!session)
      return textResult({ error: new ApiError('unauthorized', `run ${run_id} has ended; its bridge calls are refused`, 'session_not_found').toWire() }, true);
    const checked = argumentSchema(tool).safeParse(args);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      const where = issue?.path.map(String).join('.') || 'arguments';
      return textResult(
        {
          error: new ApiError('invalid_argument', `${tool.name}: ${where}: ${issue?.message ?? 'invalid'}`, 'bad_argument', {
            path: issue?.path.map(String) ?? [],
          }).toWire(),
        },
        true,
      );
    }
    const built = tool.toProxy(isRecord(args) ? args : {}, session);
    const params: JsonObject = { ...built.params, run_id };
    try {
      const result = await this.#port.handle({
        // The bridge acts for the run's own plugin: the router then applies exactly the runner's grants.
        caller_plugin: session.plugin_identity,
        method: built.method,
        params,
        signal,
        notify: () => undefined,
      });
      return textResult(result);
    } catch (err) {
      return textResult({ error: toApiError(err).toWire() }, true);
    }
  }

  /** Stops listening and closes every bridge connection. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#sweep) clearInterval(this.#sweep);
    for (const run_id of [...this.#tokens.keys()]) this.#revoke(run_id);
    for (const set of this.#conns.values()) for (const s of set) s.destroy();
    this.#conns.clear();
    this.#server?.close();
    if (this.#server) rmSync(this.socketPath, { force: true });
  }
}
