// One JSON-RPC 2.0 peer for both ends of the plugin channel (architecture.md §4): outgoing requests
// with their timeout and abort, inbound requests answered once, and one way to end it all. The owner
// frames lines and maps errors; the peer only correlates and dispatches.
import type { z } from 'zod';
import type { JsonObject } from './event.js';
import {
  RPC_ERROR_CODES,
  controlMethods,
  type ControlNotification,
  type ControlParamsInput,
  type ControlRequest,
  type ControlResult,
  type RpcError,
  type RpcMessage,
  type RpcRequest,
  type RpcResponse,
  type RpcSide,
} from './wire.js';

export type RpcId = string | number;

/** The other end answered a request with a JSON-RPC error. */
export class RpcErrorReply extends Error {
  override name = 'RpcErrorReply';
  constructor(
    readonly rpcCode: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

/** A request got no answer in time. */
export class RpcTimeoutError extends Error {
  override name = 'RpcTimeoutError';
}

/** A control request was answered with a result that does not match the method's schema. */
export class RpcResultError extends Error {
  override name = 'RpcResultError';
  constructor(
    readonly method: string,
    readonly raw: unknown,
    readonly issue: string,
  ) {
    super(`${method} was answered with an invalid result: ${issue}`);
  }
}

/** Thrown by a request handler to answer with this JSON-RPC error instead of a result. */
export class RpcReplyError extends Error {
  override name = 'RpcReplyError';
  constructor(
    readonly rpcCode: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/**
 * One request from the other end while it is answered. Its abort signal is made only when a handler asks for
 * it: most answers (state, storage, history) never do, and an AbortController is a few microseconds a call.
 */
class Inbound {
  #controller: AbortController | null = null;
  #ended = false;

  get ended(): boolean {
    return this.#ended;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#ended) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  /** The peer ended: the answer will not be sent, and a handler's signal aborts. */
  end(): void {
    this.#ended = true;
    this.#controller?.abort();
  }
}

/** A request from the other end, as its handler sees it. */
export type InboundRequest = {
  id: RpcId;
  method: string;
  params: JsonObject;
  /** Aborted when the peer ends; an answer after that is not sent. */
  signal: AbortSignal;
  /** Runs `fn` once the answer has been sent (or dropped because the peer ended). */
  afterAnswer(fn: () => void): void;
};

export type RequestOptions = { timeoutMs?: number; signal?: AbortSignal };

export type RpcPeerOptions = {
  /** Writes one message as one line. */
  send(message: JsonObject): void;
  /** Answers a request: a value (or a promise of one) is the result; a throw is the error. */
  onRequest(request: InboundRequest): unknown;
  onNotification(method: string, params: JsonObject): void;
  /** A response whose id matches no request in flight. */
  onStrayResponse?(id: RpcId | null): void;
  /** An answer could not be sent (the handler's error could not be mapped, or send threw). */
  onAnswerFailed?(method: string, err: unknown): void;
  /** The JSON-RPC error sent for a handler's throw that is not an RpcReplyError. */
  toRpcError?(err: unknown): RpcError;
  /** The error a caller of request() gets for each way a request can fail; defaults are the classes above. */
  errors?: {
    reply?(method: string, error: RpcError): Error;
    timeout?(method: string, timeoutMs: number): Error;
    aborted?(method: string): Error;
  };
};

/** The result schemas, typed per method so a generic request keeps its result type without a cast. */
const RESULT_SCHEMAS: { readonly [M in ControlRequest<RpcSide>]: { readonly result: z.ZodType<ControlResult<M>> } } = controlMethods;

type Pending = { method: string; settle(outcome: { result: unknown } | { error: Error }): void };

function internalError(err: unknown): RpcError {
  return { code: RPC_ERROR_CODES.apiError, message: err instanceof Error ? err.message : String(err) };
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof Reflect.get(value, 'then') === 'function';
}

/** One end of the channel; `S` is the side it speaks for, which decides the control methods it may send. */
export class RpcPeer<S extends RpcSide> {
  readonly #opts: RpcPeerOptions;
  readonly #pending = new Map<number, Pending>();
  readonly #inbound = new Map<RpcId, Inbound>();
  #nextId = 1;
  #ended: Error | null = null;

  constructor(
    readonly side: S,
    opts: RpcPeerOptions,
  ) {
    this.#opts = opts;
  }

  /** Sends a control request and resolves with its parsed result. */
  async request<M extends ControlRequest<S>>(method: M, params: ControlParamsInput<M>, opts: RequestOptions = {}): Promise<ControlResult<M>> {
    const raw = await this.requestRaw(method, params, opts);
    const parsed = RESULT_SCHEMAS[method].result.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new RpcResultError(method, raw, issue ? `${issue.path.map(String).join('.') || '(result)'}: ${issue.message}` : 'invalid shape');
    }
    return parsed.data;
  }

  /** Sends any request (a proxy action); the caller parses the result. */
  requestRaw(method: string, params: JsonObject, opts: RequestOptions = {}): Promise<unknown> {
    if (this.#ended) return Promise.reject(this.#ended);
    const errors = this.#opts.errors ?? {};
    const id = this.#nextId++;
    return new Promise<unknown>((resolve, reject) => {
      // One path ends a request: answer, timeout, abort or the peer's end all go through settle().
      const cleanups: Array<() => void> = [];
      const settle = (outcome: { result: unknown } | { error: Error }): void => {
        if (!this.#pending.delete(id)) return;
        for (const cleanup of cleanups) cleanup();
        if ('error' in outcome) reject(outcome.error);
        else resolve(outcome.result);
      };
      this.#pending.set(id, { method, settle });
      const { timeoutMs, signal } = opts;
      if (timeoutMs !== undefined) {
        const timer = setTimeout(
          () => settle({ error: errors.timeout?.(method, timeoutMs) ?? new RpcTimeoutError(`no answer to ${method} within ${timeoutMs} ms`) }),
          timeoutMs,
        );
        timer.unref();
        cleanups.push(() => clearTimeout(timer));
      }
      if (signal) {
        const onAbort = (): void => settle({ error: errors.aborted?.(method) ?? new Error(`${method} was cancelled`) });
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        cleanups.push(() => signal.removeEventListener('abort', onAbort));
      }
      this.#opts.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Sends a control notification this side may send. */
  notify<M extends ControlNotification<S>>(method: M, params: ControlParamsInput<M>): void {
    this.notifyRaw(method, params);
  }

  /** Sends any notification (a proxy action's stream chunks arrive through the host's call). */
  notifyRaw(method: string, params: JsonObject): void {
    if (!this.#ended) this.#opts.send({ jsonrpc: '2.0', method, params });
  }

  /** Feeds one parsed message from the other end. */
  receive(message: RpcMessage): void {
    if (!('method' in message)) return this.#onResponse(message);
    if ('id' in message) return this.#onRequest(message);
    this.#opts.onNotification(message.method, message.params);
  }

  /** Fails every request in flight with `error`; the peer stays usable. */
  failPending(error: Error): void {
    for (const pending of [...this.#pending.values()]) pending.settle({ error });
  }

  /** Ends the peer: requests in flight fail with `error`, inbound requests are aborted, new ones refused. */
  end(error: Error): void {
    this.#ended ??= error;
    this.failPending(error);
    for (const inbound of this.#inbound.values()) inbound.end();
    this.#inbound.clear();
  }

  #onResponse(message: RpcResponse): void {
    const pending = typeof message.id === 'number' ? this.#pending.get(message.id) : undefined;
    if (!pending) return this.#opts.onStrayResponse?.(message.id);
    if ('error' in message) {
      const error =
        this.#opts.errors?.reply?.(pending.method, message.error) ?? new RpcErrorReply(message.error.code, message.error.message, message.error.data);
      pending.settle({ error });
    } else {
      pending.settle({ result: message.result });
    }
  }

  #onRequest(message: RpcRequest): void {
    const { id, method, params } = message;
    const inbound = new Inbound();
    const after: Array<() => void> = [];
    this.#inbound.set(id, inbound);
    const answer = (outcome: { result: unknown } | { error: unknown }): void => {
      try {
        if (!inbound.ended) {
          if ('result' in outcome) this.#opts.send({ jsonrpc: '2.0', id, result: outcome.result ?? null });
          else this.#opts.send({ jsonrpc: '2.0', id, error: this.#errorOf(outcome.error) });
        }
      } catch (err) {
        this.#opts.onAnswerFailed?.(method, err);
      }
      if (this.#inbound.get(id) === inbound) this.#inbound.delete(id);
      for (const fn of after) fn();
    };
    let outcome: unknown;
    try {
      outcome = this.#opts.onRequest({
        id,
        method,
        params,
        get signal() {
          return inbound.signal;
        },
        afterAnswer: (fn) => after.push(fn),
      });
    } catch (err) {
      return answer({ error: err });
    }
    if (!isPromiseLike(outcome)) return answer({ result: outcome });
    outcome.then(
      (result) => answer({ result }),
      (error: unknown) => answer({ error }),
    );
  }

  #errorOf(err: unknown): RpcError {
    if (err instanceof RpcReplyError)
      return err.data === undefined ? { code: err.rpcCode, message: err.message } : { code: err.rpcCode, message: err.message, data: err.data };
    return (this.#opts.toRpcError ?? internalError)(err);
  }
}
