// One MCP server's client session (skills-mcp-tools.md §3.3): connect with a start budget, list tools,
// watch for crashes, reconnect with backoff (2/4/8 s, 4 attempts), honour tools/list_changed, and
// call tools with a timeout. The ready signal fires exactly once per start.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ContentElement, JsonObject } from '../../core/protocol/event.js';
import type { LbotError } from '../../core/errors.js';
import { LBOT_VERSION } from '../../package-root.js';
import { settledOrAborted, sleepUnlessAborted, withTimeout } from '../process/timeout.js';
import type { McpServerRecord } from './config.js';
import type { McpConnection } from './connectors.js';
import { clientCapabilities, installClientHandlers } from './client-capabilities.js';
import { McpCallError, McpPhaseError, type McpErrorPhase } from './errors.js';
import { redactText, secretValues } from './masking.js';
import { convertToolResult, flattenError, McpToolError } from './results.js';
import { listToolPages, type ListedTool } from './tool-list.js';
import { callError, connectionLostError, handshakeError } from './session-errors.js';
import type { McpRuntimeInfo, McpStatus, SessionOptions } from './session-types.js';

export type { McpRuntimeInfo, McpStatus, SessionOptions } from './session-types.js';

const MAX_LOGGED_ERRORS = 20;
const LIST_CHANGED_DEBOUNCE_MS = 100;

export type { ListedTool } from './tool-list.js';

type Live = { conn: McpConnection; client: Client; closed: Promise<void> };

export class McpSession {
  readonly record: McpServerRecord;
  readonly #o: SessionOptions;
  readonly #secrets: string[];
  #status: McpStatus;
  #errorMessage: string | null = null;
  #errorPhase: McpErrorPhase | null = null;
  #authError: LbotError | null = null;
  #retryCount = 0;
  #tools: ListedTool[] = [];
  #live: Live | null = null;
  #serverInfo: McpRuntimeInfo['server_info'] = null;
  #instructions: string | null = null;
  #connectedAt: number | null = null;
  #nextRetryAt: number | null = null;
  #timings: McpRuntimeInfo['timings'] = { connect_ms: null, list_tools_ms: null };
  #box: McpConnection['box'] | undefined;
  #loggedErrors = 0;
  readonly #shutdown = new AbortController();
  #task: Promise<void> | null = null;
  #ready: Promise<void>;
  #markReady!: () => void;
  #first: Promise<void>;
  #markFirst!: () => void;
  #refreshTimer: NodeJS.Timeout | null = null;
  readonly #closing = new WeakSet<Client>();

  constructor(record: McpServerRecord, opts: SessionOptions) {
    this.record = record;
    this.#o = opts;
    this.#secrets = secretValues(record);
    this.#status = record.enabled ? 'idle' : 'disabled';
    this.#ready = new Promise((resolve) => (this.#markReady = resolve));
    this.#first = new Promise((resolve) => (this.#markFirst = resolve));
  }

  get name(): string {
    return this.record.name;
  }

  get status(): McpStatus {
    return this.#status;
  }

  /** The tools of the connected server (empty unless connected). */
  get tools(): readonly ListedTool[] {
    return this.#status === 'connected' ? this.#tools : [];
  }

  /** Starts connecting (once) and resolves when the session is connected or has failed for good. */
  start(): Promise<void> {
    if (!this.record.enabled) {
      this.#markReady();
      this.#markFirst();
      return this.#ready;
    }
    this.#task ??= this.#lifecycle().catch((err: unknown) => {
      this.#fail('runtime', `internal error in the MCP session: ${flattenError(err)}`);
      this.#markReady();
      this.#markFirst();
    });
    return this.#ready;
  }

  /** Resolves once the first connection attempt has succeeded or failed (later retries run on). */
  firstOutcome(): Promise<void> {
    void this.start();
    return this.#first;
  }

  runtimeInfo(): McpRuntimeInfo {
    const info: McpRuntimeInfo = {
      status: this.#status,
      error_message: this.#errorMessage,
      error_phase: this.#errorPhase,
      error_code: this.#authError?.code ?? null,
      error_hint: this.#authError?.hint ?? null,
      retry_count: this.#retryCount,
      tool_count: this.tools.length,
      tools: this.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema })),
      pid: this.#status === 'connected' ? (this.#live?.conn.pid ?? null) : null,
      server_info: this.#serverInfo,
      instructions: this.#instructions,
      connected_at: this.#connectedAt === null ? null : new Date(this.#connectedAt).toISOString(),
      next_retry_at: this.#nextRetryAt === null ? null : new Date(this.#nextRetryAt).toISOString(),
      timings: { ...this.#timings },
    };
    if (this.#box) {
      info.box_session_id = this.#box.session_id;
      info.box_enabled = true;
    }
    return info;
  }

  /** Stops the lifecycle and the server; waits up to 5 s for it (§3.3). Idempotent. */
  async close(): Promise<void> {
    this.#shutdown.abort();
    if (this.#refreshTimer) clearTimeout(this.#refreshTimer);
    const live = this.#live;
    if (live) await this.#teardown(live);
    if (this.#task) await withTimeout(this.#task, 5000, { abort: this.#shutdown, error: () => new Error('timeout') }).catch(() => undefined);
    this.#status = 'closed';
    this.#markReady();
    this.#markFirst();
  }

  /** Calls a tool by the server's own name; throws McpCallError. */
  async callTool(tool: string, args: JsonObject, opts: { signal?: AbortSignal | undefined; timeoutMs: number; deadline?: boolean }): Promise<ContentElement[]> {
    const live = this.#live;
    if (this.#status !== 'connected' || !live) {
      throw new McpCallError(
        'not_connected',
        `MCP session ${this.name} is not connected (status ${this.#status}${this.#errorMessage ? `: ${this.#errorMessage}` : ''})`,
        this.name,
        tool,
      );
    }
    let result: CallToolResult;
    let release = () => {};
    try {
      const direct = live.conn.direct;
      if (direct) result = await direct.call(tool, args, opts);
      else {
        // The SDK never removes the abort listener it adds to the caller's signal, and callers pass long-lived
        // signals (a plugin connection's); a per-call signal keeps that listener from piling up there.
        const perCall = new AbortController();
        const forward = () => perCall.abort(opts.signal?.reason);
        if (opts.signal?.aborted) forward();
        else opts.signal?.addEventListener('abort', forward, { once: true });
        release = () => opts.signal?.removeEventListener('abort', forward);
        const raw = await live.client.callTool({ name: tool, arguments: args }, undefined, {
          timeout: opts.timeoutMs,
          maxTotalTimeout: opts.timeoutMs,
          signal: perCall.signal,
        });
        if (!Array.isArray(raw.content))
          throw new McpCallError('protocol', `MCP server ${this.name} answered tools/call ${tool} without content`, this.name, tool);
        // callTool has validated the answer against the SDK's CallToolResultSchema; only the legacy union widens it.
        result = { ...raw, content: raw.content as CallToolResult['content'] };
      }
    } catch (err) {
      throw callError(err, tool, opts, {
        name: this.name,
        conn: this.#live?.conn ?? null,
        connected: this.#status === 'connected',
        redact: (t) => this.#redact(t),
      });
    } finally {
      release();
    }
    try {
      return convertToolResult(result);
    } catch (err) {
      if (err instanceof McpToolError) throw new McpCallError('tool_error', this.#redact(err.message), this.name, tool, { cause: err });
      throw err;
    }
  }

  #redact(text: string): string {
    return redactText(text, this.#secrets);
  }

  #fail(phase: McpErrorPhase, message: string): void {
    this.#status = 'error';
    this.#errorPhase = phase;
    this.#errorMessage = this.#redact(message);
    this.#o.onChange?.();
  }

  #log(message: string): void {
    this.#o.log?.(this.#redact(message));
  }

  async #lifecycle(): Promise<void> {
    const delays = this.#o.retryDelaysMs;
    const maxAttempts = delays.length + 1;
    let attempt = 0;
    let budgetEnd = Date.now() + this.#o.startTimeoutMs;
    let everConnected = false;
    for (;;) {
      if (this.#shutdown.signal.aborted) return;
      this.#status = 'connecting';
      this.#nextRetryAt = null;
      this.#o.onChange?.();
      let connectedFor = 0;
      let failure: McpPhaseError;
      try {
        const live = await this.#connect(budgetEnd);
        everConnected = true;
        const since = Date.now();
        this.#markReady();
        this.#markFirst();
        failure = await this.#watch(live);
        connectedFor = Date.now() - since;
      } catch (err) {
        failure = err instanceof McpPhaseError ? err : new McpPhaseError('mcp_init', flattenError(err), { cause: err });
      }
      if (this.#shutdown.signal.aborted) return;
      if (connectedFor >= (this.#o.healthyResetMs ?? 60_000)) attempt = 0;
      attempt += 1;
      this.#retryCount = attempt;
      this.#tools = [];
      this.#markFirst();
      if (failure.auth) {
        // Retrying cannot help: the same request gets the same 401 (the user has to log in).
        this.#authError = failure.auth;
        this.#fail(failure.phase, failure.message);
        this.#markReady();
        return;
      }
      if (failure.phase === 'box_unavailable') {
        this.#fail(failure.phase, failure.message);
        this.#markReady();
        return;
      }
      const delay = delays[attempt - 1];
      const budgetLeft = budgetEnd - Date.now();
      if (attempt >= maxAttempts || delay === undefined) {
        this.#fail(failure.phase, `Failed after ${attempt} attempts: ${failure.message}`);
        this.#markReady();
        return;
      }
      if (!everConnected && budgetLeft <= delay) {
        const secs = Math.round(this.#o.startTimeoutMs / 1000);
        this.#fail(failure.phase, `Connection timeout after ${secs} seconds (${attempt} attempt${attempt === 1 ? '' : 's'}): ${failure.message}`);
        this.#markReady();
        return;
      }
      this.#fail(failure.phase, failure.message);
      this.#nextRetryAt = Date.now() + delay;
      this.#log(`${failure.message}; retrying in ${delay / 1000}s (attempt ${attempt + 1} of ${maxAttempts})`);
      await sleepUnlessAborted(delay, this.#shutdown.signal);
      // After a good connection each reconnect gets a fresh start budget.
      if (everConnected) budgetEnd = Date.now() + this.#o.startTimeoutMs;
    }
  }

  /** One attempt: connect, handshake, list tools, all within the start budget. */
  async #connect(budgetEnd: number): Promise<Live> {
    const started = Date.now();
    const attempt = new AbortController();
    const onShutdown = () => attempt.abort();
    this.#shutdown.signal.addEventListener('abort', onShutdown, { once: true });
    const remaining = () => budgetEnd - Date.now();
    const budgetSecs = Math.round(this.#o.startTimeoutMs / 1000);
    let conn: McpConnection | null = null;
    let client: Client | null = null;
    try {
      const pending = this.#o.connector(this.record, { signal: attempt.signal, transient: this.#o.transient ?? false });
      conn = await withTimeout(pending, remaining(), {
        abort: attempt,
        error: () => {
          // A connection that arrives after the budget is closed at once.
          void pending.then(
            (late) => this.#teardown({ conn: late, client: null }),
            () => undefined,
          );
          return new McpPhaseError('process_start', `connection timeout: MCP server ${this.name} did not start within ${budgetSecs}s`);
        },
      });
      const c = conn;
      this.#box = c.box;
      const elicitation = this.#o.elicitation ?? 'none';
      const sampler = this.#o.sampler ?? null;
      const cl = new Client({ name: 'lbot', version: LBOT_VERSION }, { capabilities: clientCapabilities(elicitation, sampler !== null) });
      installClientHandlers(cl, this.record, elicitation, this.#o.prompt, sampler);
      client = cl;
      let markClosed!: () => void;
      const closed = new Promise<void>((resolve) => (markClosed = resolve));
      cl.onclose = () => markClosed();
      // Closing a client aborts its streams; the SDK reports that as an error, which it is not.
      cl.onerror = (err) => {
        if (!this.#closing.has(cl)) this.#onProtocolError(err);
      };
      cl.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#refreshSoon());
      try {
        await withTimeout(cl.connect(c.transport, { timeout: Math.max(1, remaining()), signal: attempt.signal }), remaining(), {
          abort: attempt,
          error: () =>
            new McpPhaseError('mcp_init', `connection timeout: MCP server ${this.name} did not complete the initialize handshake within ${budgetSecs}s`),
        });
        this.#timings.connect_ms = Date.now() - started;
        const listStart = Date.now();
        this.#tools = await withTimeout(
          listToolPages(cl, this.name, (m) => this.#log(m), Math.max(1, remaining()), attempt.signal),
          remaining(),
          {
            abort: attempt,
            error: () =>
              new McpPhaseError('mcp_init', `connection timeout: MCP server ${this.name} did not list its tools within the ${budgetSecs}s start budget`),
          },
        );
        this.#timings.list_tools_ms = Date.now() - listStart;
      } catch (err) {
        throw handshakeError(this.name, err, c, budgetSecs);
      }
      const version = cl.getServerVersion();
      this.#serverInfo = version ? { name: version.name, version: version.version } : null;
      this.#instructions = cl.getInstructions() ?? null;
      const live: Live = { conn: c, client: cl, closed };
      this.#live = live;
      this.#status = 'connected';
      this.#errorMessage = null;
      this.#errorPhase = null;
      this.#authError = null;
      this.#connectedAt = Date.now();
      this.#o.onChange?.();
      return live;
    } catch (err) {
      if (conn) await this.#teardown({ conn, client });
      throw err;
    } finally {
      this.#shutdown.signal.removeEventListener('abort', onShutdown);
    }
  }

  /** Waits while connected; resolves with the failure that ended the connection (or shutdown). */
  async #watch(live: Live): Promise<McpPhaseError> {
    const pinger = live.conn.pid === null && !live.conn.box ? this.#pingLoop(live) : null;
    await settledOrAborted(live.closed, this.#shutdown.signal);
    pinger?.stop();
    await this.#teardown(live);
    if (this.#shutdown.signal.aborted) return new McpPhaseError('runtime', 'closed');
    return connectionLostError(this.name, live.conn);
  }

  /** Remote servers have no process to watch: a failed ping every interval counts as a crash (§3.3). */
  #pingLoop(live: Live): { stop(): void } {
    const interval = this.#o.pingIntervalMs ?? 60_000;
    const timer = setInterval(() => {
      live.client.ping({ timeout: Math.min(interval, 10_000) }).catch(() => {
        this.#log(`MCP server ${this.name}: ping failed; reconnecting`);
        void live.client.close();
      });
    }, interval);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  }

  async #teardown(live: { conn: McpConnection; client: Client | null }): Promise<void> {
    if (this.#live?.conn === live.conn) this.#live = null;
    if (this.#status === 'connected') this.#status = 'connecting';
    if (live.client) this.#closing.add(live.client);
    await live.client?.close().catch(() => undefined);
    await live.conn.transport.close().catch(() => undefined);
    await live.conn.dispose?.().catch((err: unknown) => this.#log(`MCP server ${this.name}: cleanup failed: ${flattenError(err)}`));
  }

  #onProtocolError(err: Error): void {
    this.#loggedErrors += 1;
    if (this.#loggedErrors <= MAX_LOGGED_ERRORS) this.#log(`MCP server ${this.name}: ${err.message}`);
    else if (this.#loggedErrors === MAX_LOGGED_ERRORS + 1) this.#log(`MCP server ${this.name}: more protocol errors; further ones are not logged`);
  }

  /** tools/list_changed: re-list (debounced); new run tool tables see the new list. */
  #refreshSoon(): void {
    if (this.#refreshTimer) clearTimeout(this.#refreshTimer);
    this.#refreshTimer = setTimeout(() => {
      this.#refreshTimer = null;
      void this.refreshTools().catch((err: unknown) => this.#log(`MCP server ${this.name}: re-listing tools failed: ${flattenError(err)}`));
    }, LIST_CHANGED_DEBOUNCE_MS);
    this.#refreshTimer.unref();
  }

  /** Re-lists the tools of a connected server. */
  async refreshTools(): Promise<void> {
    const live = this.#live;
    if (!live || this.#status !== 'connected') return;
    const tools = await listToolPages(live.client, this.name, (m) => this.#log(m), 30_000);
    if (this.#live === live) {
      this.#tools = tools;
      this.#o.onChange?.();
    }
  }
}
