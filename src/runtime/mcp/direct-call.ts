// tools/call straight over a stdio server's line channel, past the SDK's Protocol: the answer is parsed
// once and checked once against CallToolResultSchema, instead of the SDK's message schema, its four
// type guards and then the same result schema. Timeout, cancellation (notifications/cancelled) and a
// closed channel fail the call with the same McpErrors the SDK raises, so session-errors.ts maps them
// alike. lbot lists tools itself (tool-list.ts), so the SDK never held output validators or task
// flags for these calls: nothing the SDK's callTool checks is skipped here.
import { CallToolResultSchema, ErrorCode, McpError, type CallToolResult, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isRecord } from '../../core/json.js';
import type { JsonObject } from '../../core/protocol/event.js';

type Pending = { resolve(result: CallToolResult): void; reject(err: unknown): void };

/** String ids, so they never meet the SDK's numeric ones on the same channel. */
const ID_PREFIX = 'lbot-';

export class DirectToolCalls {
  readonly #pending = new Map<string, Pending>();
  #next = 0;
  #closed = false;

  constructor(private readonly send: (message: JSONRPCMessage) => Promise<void>) {}

  /** Calls a tool; rejects with McpError (timeout, closed channel, the server's error) or the result's schema error. */
  call(name: string, args: JsonObject, opts: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<CallToolResult> {
    if (this.#closed) return Promise.reject(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'));
    const signal = opts.signal;
    if (signal?.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    const id = `${ID_PREFIX}${this.#next++}`;
    return new Promise<CallToolResult>((resolve, reject) => {
      const done = () => {
        this.#pending.delete(id);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const cancel = (reason: unknown) => {
        if (!this.#pending.has(id)) return;
        done();
        this.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(reason) } }).catch(() => undefined);
        reject(reason instanceof McpError ? reason : new McpError(ErrorCode.RequestTimeout, String(reason)));
      };
      const onAbort = () => cancel(signal?.reason);
      const timer = setTimeout(() => cancel(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: opts.timeoutMs })), opts.timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(id, {
        resolve: (result) => {
          done();
          resolve(result);
        },
        reject: (err) => {
          done();
          reject(err);
        },
      });
      this.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }).catch((err: unknown) => this.#pending.get(id)?.reject(err));
    });
  }

  /** Takes a parsed line when it answers one of these calls; false for every other message (the SDK's). */
  take(message: Record<string, unknown>): boolean {
    const id = message.id;
    if (typeof id !== 'string' || !id.startsWith(ID_PREFIX) || 'method' in message) return false;
    const pending = this.#pending.get(id);
    if (!pending) return false;
    const error = message.error;
    if (message.jsonrpc !== '2.0') pending.reject(new McpError(ErrorCode.InvalidRequest, 'the answer to tools/call is not a JSON-RPC 2.0 message'));
    else if (error !== undefined) {
      const e: Record<string, unknown> = isRecord(error) ? error : {};
      pending.reject(
        typeof e.code === 'number' && typeof e.message === 'string'
          ? McpError.fromError(e.code, e.message, e.data)
          : new McpError(ErrorCode.InvalidRequest, 'the error answer to tools/call is malformed'),
      );
    } else {
      const parsed = CallToolResultSchema.safeParse(message.result);
      if (parsed.success) pending.resolve(parsed.data);
      else pending.reject(parsed.error);
    }
    return true;
  }

  /** The channel is gone: every call in flight fails as the SDK's do, and later ones at once. */
  close(): void {
    this.#closed = true;
    const err = new McpError(ErrorCode.ConnectionClosed, 'Connection closed');
    for (const p of [...this.#pending.values()]) p.reject(err);
  }
}
