// The typed host API client a runner receives: one method per proxy action, derived from the
// proxy method table, with run_id added, deadline-bounded timeouts and parsed results (§6.7, §7).
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import {
  AgentApiErrorSchema,
  proxyMethods,
  isProxyMethod,
  type AgentApiError,
  type Message,
  type MessageChunk,
  type ModelReply,
  type ProxyMethod,
  type ProxyParamsInput,
  type ProxyResult,
} from '../core/protocol/index.js';

/** A refused or failed host API call; `error` is the host's `AgentAPIError`. */
export class ApiCallError extends Error {
  override name = 'ApiCallError';
  constructor(
    readonly method: string,
    readonly error: AgentApiError,
  ) {
    super(`${method}: ${error.code}: ${error.message}`);
  }

  get code(): AgentApiError['code'] {
    return this.error.code;
  }

  get retryable(): boolean {
    return this.error.retryable;
  }

  get details(): Record<string, unknown> {
    return this.error.details;
  }
}

/** Options of one call: a shorter timeout than the method's default, or a signal to abandon it. */
export type CallOptions = { timeoutMs?: number; signal?: AbortSignal };

/** How the client reaches the host: JSON-RPC over stdio in a plugin, handlers in `runInProcess`. */
export interface ApiTransport {
  /** Sends one request; rejects with ApiCallError. */
  request(method: string, params: Record<string, unknown>, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<unknown>;
  /** Routes `models.stream/chunk` notifications of one stream to `listener` until unsubscribed. */
  onStreamChunk(stream_id: string, listener: (chunk: MessageChunk) => void): () => void;
}

type KnownKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };
/** The arguments of a proxy method: its params without `run_id` (the client adds it). */
export type ProxyArgs<M extends ProxyMethod> = Pick<ProxyParamsInput<M>, Exclude<KnownKeys<ProxyParamsInput<M>>, 'run_id'>>;

type Scope = ProxyArgs<'state.get'>['scope'];
type StreamArgs = Omit<ProxyArgs<'models.stream'>, 'stream_id'>;
type Area = ProxyArgs<'storage.get'>['area'];

/** The host API of one run. */
export interface RunnerApi {
  readonly run_id: string;
  /** Calls any proxy method with typed arguments and a parsed, typed result. */
  call<M extends ProxyMethod>(method: M, args: ProxyArgs<M>, opts?: CallOptions): Promise<ProxyResult<M>>;
  /** Sends `params` verbatim (no run_id added, result unparsed): an escape hatch for tests and new methods. */
  request(method: string, params: Record<string, unknown>, opts?: CallOptions): Promise<unknown>;
  readonly models: {
    /** The reply's message; `invokeReply` gives the whole reply. */
    invoke(args: ProxyArgs<'models.invoke'>, opts?: CallOptions): Promise<Message>;
    /** `{message, usage, finish_reason, model}`: the message plus the upstream's token usage and finish reason. */
    invokeReply(args: ProxyArgs<'models.invoke'>, opts?: CallOptions): Promise<ModelReply>;
    /** Streams a model call; `onChunk` gets each chunk, the promise the final message. */
    stream(args: StreamArgs, onChunk: (chunk: MessageChunk) => void, opts?: CallOptions): Promise<Message>;
    /** `stream`, answering the whole reply `{message, usage, finish_reason, model}`. */
    streamReply(args: StreamArgs, onChunk: (chunk: MessageChunk) => void, opts?: CallOptions): Promise<ModelReply>;
    rerank(args: ProxyArgs<'models.rerank'>, opts?: CallOptions): Promise<ProxyResult<'models.rerank'>['results']>;
    /** `{tokens, context_window, tokenizer}` of messages, text and tools for a model. */
    countTokens(args: ProxyArgs<'models.count_tokens'>, opts?: CallOptions): Promise<ProxyResult<'models.count_tokens'>>;
    embed(args: ProxyArgs<'models.embed'>, opts?: CallOptions): Promise<ProxyResult<'models.embed'>>;
  };
  readonly tools: {
    getDetail(tool_name: string, opts?: CallOptions): Promise<ProxyResult<'tools.get_detail'>['tool']>;
    call(tool_name: string, parameters?: Record<string, unknown>, opts?: CallOptions): Promise<ProxyResult<'tools.call'>>;
  };
  readonly knowledge: {
    /** The knowledge bases this run was granted (needs `knowledge_bases: [list]`). */
    list(opts?: CallOptions): Promise<ProxyResult<'knowledge.list'>['knowledge_bases']>;
    /** Ranked chunks `{kb_id, document_id, chunk_id, score, text, content, metadata}` of one granted base. */
    retrieve(args: ProxyArgs<'knowledge.retrieve'>, opts?: CallOptions): Promise<ProxyResult<'knowledge.retrieve'>['results']>;
  };
  readonly history: {
    page(args?: ProxyArgs<'history.page'>, opts?: CallOptions): Promise<ProxyResult<'history.page'>>;
    search(args: ProxyArgs<'history.search'>, opts?: CallOptions): Promise<ProxyResult<'history.search'>>;
  };
  readonly events: {
    get(event_id: string, opts?: CallOptions): Promise<ProxyResult<'events.get'>>;
    page(args?: ProxyArgs<'events.page'>, opts?: CallOptions): Promise<ProxyResult<'events.page'>>;
  };
  readonly artifacts: {
    metadata(artifact_id: string, opts?: CallOptions): Promise<ProxyResult<'artifacts.metadata'>>;
    readRange(artifact_id: string, range?: { offset?: number; length?: number | null }, opts?: CallOptions): Promise<ProxyResult<'artifacts.read_range'>>;
  };
  readonly state: {
    get(scope: Scope, key: string, opts?: CallOptions): Promise<unknown>;
    set(scope: Scope, key: string, value: unknown, opts?: CallOptions): Promise<void>;
    delete(scope: Scope, key: string, opts?: CallOptions): Promise<boolean>;
    list(scope: Scope, args?: { prefix?: string | null; limit?: number }, opts?: CallOptions): Promise<ProxyResult<'state.list'>>;
  };
  readonly storage: {
    get(area: Area, key: string, opts?: CallOptions): Promise<Buffer>;
    set(area: Area, key: string, value: Uint8Array | string, opts?: CallOptions): Promise<void>;
    delete(area: Area, key: string, opts?: CallOptions): Promise<boolean>;
    list(area: Area, prefix?: string | null, opts?: CallOptions): Promise<string[]>;
  };
  readonly files: {
    get(file_key: string, opts?: CallOptions): Promise<Buffer>;
  };
  readonly platform: {
    requestAction(
      action: string,
      target?: Record<string, unknown> | null,
      payload?: Record<string, unknown> | null,
      opts?: CallOptions,
    ): Promise<Record<string, unknown>>;
  };
}

/** The result schemas, typed per method so a generic call keeps its result type without a cast. */
const RESULT_SCHEMAS: { readonly [M in ProxyMethod]: { readonly result: z.ZodType<ProxyResult<M>> } } = proxyMethods;

/** Default timeout of a method without a table entry (raw requests). */
const RAW_TIMEOUT_MS = 30_000;

/** `min(requested or default, time left before the deadline)`, never below 1 ms (§6.7). */
export function callTimeoutMs(method: string, deadline_at: number | null, requestedMs?: number, now: number = Date.now()): number {
  const base = requestedMs ?? (isProxyMethod(method) ? proxyMethods[method].timeout_s * 1000 : RAW_TIMEOUT_MS);
  const bounded = deadline_at === null ? base : Math.min(base, deadline_at * 1000 - now);
  return Math.max(1, bounded);
}

/** Builds an ApiCallError for a result that does not match the method's result schema. */
function badResult(method: string, reason: string): ApiCallError {
  return new ApiCallError(method, {
    code: 'runtime_error',
    message: `the host answered ${method} with an unexpected result: ${reason}`,
    retryable: false,
    details: { reason: 'invalid_result' },
  });
}

/** Turns a JSON-RPC error object into an ApiCallError (the `data` of -32000 is the AgentAPIError). */
export function apiErrorFromRpc(method: string, error: { code: number; message: string; data?: unknown }): ApiCallError {
  const parsed = AgentApiErrorSchema.safeParse(error.data);
  if (parsed.success) return new ApiCallError(method, parsed.data);
  const reason = error.code === -32601 ? 'method_not_found' : 'rpc_error';
  return new ApiCallError(method, {
    code: error.code === -32601 ? 'not_found' : 'runtime_error',
    message: error.message,
    retryable: false,
    details: { reason, rpc_code: error.code },
  });
}

/** Creates the API client of one run. */
export function createRunnerApi(transport: ApiTransport, run: { run_id: string; deadline_at: number | null }): RunnerApi {
  const { run_id, deadline_at } = run;

  const request = (method: string, params: Record<string, unknown>, opts: CallOptions = {}): Promise<unknown> =>
    transport.request(method, params, { timeoutMs: callTimeoutMs(method, deadline_at, opts.timeoutMs), signal: opts.signal });

  async function call<M extends ProxyMethod>(method: M, args: ProxyArgs<M>, opts?: CallOptions): Promise<ProxyResult<M>> {
    const raw = await request(method, { ...args, run_id }, opts);
    const parsed = RESULT_SCHEMAS[method].result.safeParse(raw);
    if (!parsed.success) throw badResult(method, parsed.error.issues[0]?.message ?? 'invalid shape');
    return parsed.data;
  }

  async function streamReply(args: StreamArgs, onChunk: (chunk: MessageChunk) => void, opts?: CallOptions): Promise<ModelReply> {
    const stream_id = randomUUID();
    const unsubscribe = transport.onStreamChunk(stream_id, onChunk);
    try {
      return await call('models.stream', { ...args, stream_id }, opts);
    } finally {
      unsubscribe();
    }
  }

  return {
    run_id,
    call,
    request,
    models: {
      invoke: async (args, opts) => (await call('models.invoke', args, opts)).message,
      invokeReply: (args, opts) => call('models.invoke', args, opts),
      stream: async (args, onChunk, opts) => (await streamReply(args, onChunk, opts)).message,
      streamReply,
      rerank: async (args, opts) => (await call('models.rerank', args, opts)).results,
      countTokens: (args, opts) => call('models.count_tokens', args, opts),
      embed: (args, opts) => call('models.embed', args, opts),
    },
    tools: {
      getDetail: async (tool_name, opts) => (await call('tools.get_detail', { tool_name }, opts)).tool,
      call: (tool_name, parameters = {}, opts) => call('tools.call', { tool_name, parameters }, opts),
    },
    knowledge: {
      list: async (opts) => (await call('knowledge.list', {}, opts)).knowledge_bases,
      retrieve: async (args, opts) => (await call('knowledge.retrieve', args, opts)).results,
    },
    history: {
      page: (args = {}, opts) => call('history.page', args, opts),
      search: (args, opts) => call('history.search', args, opts),
    },
    events: {
      get: (event_id, opts) => call('events.get', { event_id }, opts),
      page: (args = {}, opts) => call('events.page', args, opts),
    },
    artifacts: {
      metadata: (artifact_id, opts) => call('artifacts.metadata', { artifact_id }, opts),
      readRange: (artifact_id, range = {}, opts) => call('artifacts.read_range', { artifact_id, ...range }, opts),
    },
    state: {
      get: async (scope, key, opts) => (await call('state.get', { scope, key }, opts)).value,
      set: async (scope, key, value, opts) => {
        await call('state.set', { scope, key, value }, opts);
      },
      delete: async (scope, key, opts) => (await call('state.delete', { scope, key }, opts)).success,
      list: (scope, args = {}, opts) => call('state.list', { scope, ...args }, opts),
    },
    storage: {
      get: async (area, key, opts) => Buffer.from((await call('storage.get', { area, key }, opts)).value_base64, 'base64'),
      set: async (area, key, value, opts) => {
        const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
        await call('storage.set', { area, key, value_base64: bytes.toString('base64') }, opts);
      },
      delete: async (area, key, opts) => (await call('storage.delete', { area, key }, opts)).success,
      list: async (area, prefix = null, opts) => (await call('storage.list', { area, prefix }, opts)).keys,
    },
    files: {
      get: async (file_key, opts) => Buffer.from((await call('files.get', { file_key }, opts)).file_base64, 'base64'),
    },
    platform: {
      requestAction: (action, target = null, payload = null, opts) => call('platform.request_action', { action, target, payload }, opts),
    },
  };
}
