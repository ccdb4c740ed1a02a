// Drives a runner in process, without a host: a test context, API handlers instead of the host,
// and the results collected in order. For runner authors' unit tests.
import { randomUUID } from 'node:crypto';
import {
  RunContextSchema,
  proxyMethods,
  isProxyMethod,
  type MessageChunk,
  type ProxyMethod,
  type ProxyParams,
  type RunContext,
} from '../core/protocol/index.js';
import type { z } from 'zod';
import { ApiCallError, type ApiTransport } from './client.js';
import type { Plugin, RunnerResult } from './define.js';
import { executeRun } from './execute.js';

type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** Nested partial of the run context: objects merge into the defaults, arrays replace them. */
export type ContextOverrides = DeepPartial<RunContext>;

/** Answers one proxy method in a test; throw ApiCallError to refuse. `models.stream` may send chunks. */
export type ApiHandlers = {
  [M in ProxyMethod]?: (params: ProxyParams<M>, tools: StreamTools) => unknown;
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? merge(current, value) : value;
  }
  return out;
}

/** A complete, valid run context for a `message.received` "ping" in conversation c1, with overrides. */
export function createTestContext(overrides: ContextOverrides = {}): RunContext {
  const run_id = typeof overrides.run_id === 'string' ? overrides.run_id : randomUUID();
  const now = Math.floor(Date.now() / 1000);
  const base: Record<string, unknown> = {
    run_id,
    trigger: { type: 'message.received', source: 'api', timestamp: now },
    event: { event_id: 'ev-test', event_type: 'message.received', event_time: now, source: 'api', source_event_type: null, raw_ref: null, data: {} },
    conversation: {
      conversation_id: 'c1',
      thread_id: null,
      launcher_type: null,
      launcher_id: null,
      sender_id: 'u1',
      bot_id: null,
      workspace_id: null,
      session_id: null,
    },
    actor: { actor_type: 'user', actor_id: 'u1', actor_name: 'Ann', metadata: {} },
    subject: { subject_type: 'message', subject_id: 'm1', data: {} },
    input: { text: 'ping', contents: [{ type: 'text', text: 'ping' }], attachments: [], message_chain: null },
    delivery: {
      surface: 'cli',
      reply_target: null,
      supports_streaming: true,
      supports_edit: false,
      supports_reaction: false,
      max_message_size: null,
      platform_capabilities: {},
    },
    resources: {
      models: [],
      tools: [],
      knowledge_bases: [],
      files: [],
      storage: { plugin_storage: true, workspace_storage: false },
      platform_capabilities: {},
    },
    context: {
      conversation_id: 'c1',
      thread_id: null,
      latest_cursor: null,
      event_seq: null,
      transcript_seq: null,
      has_history_before: false,
      inline_policy: { mode: 'current_event', delivered_count: 1, source_total_count: null, messages_complete: false, reason: null },
      available_apis: {
        history_page: false,
        history_search: false,
        event_get: false,
        event_page: false,
        artifact_metadata: false,
        artifact_read: false,
        state: true,
        storage: true,
        prompt_get: false,
      },
    },
    state: { conversation: {}, actor: {}, subject: {}, runner: {} },
    runtime: { langbot_version: null, sdk_protocol_version: '1', query_id: null, trace_id: run_id, deadline_at: null, metadata: { streaming_supported: true } },
    config: {},
    bootstrap: null,
    adapter: { query_id: null, extra: {} },
    metadata: {},
  };
  return RunContextSchema.parse(merge(base, overrides));
}

function refuse(method: string, code: 'unauthorized' | 'invalid_argument' | 'runtime_error', message: string, reason: string): ApiCallError {
  return new ApiCallError(method, { code, message, retryable: false, details: { reason } });
}

/** The params schemas, typed per method so a generic handler call needs no cast. */
const PARAM_SCHEMAS: { readonly [M in ProxyMethod]: { readonly params: z.ZodType<ProxyParams<M>> } } = proxyMethods;

type StreamTools = { chunk(chunk: Partial<MessageChunk>): void };

async function answer<M extends ProxyMethod>(method: M, handlers: ApiHandlers, params: Record<string, unknown>, tools: StreamTools): Promise<unknown> {
  const handler = handlers[method];
  if (!handler) throw refuse(method, 'unauthorized', `no test handler for ${method}`, 'no_test_handler');
  const parsed = PARAM_SCHEMAS[method].params.safeParse(params);
  if (!parsed.success) throw refuse(method, 'invalid_argument', parsed.error.issues[0]?.message ?? 'invalid arguments', 'missing_argument');
  try {
    return await handler(parsed.data, tools);
  } catch (err) {
    if (err instanceof ApiCallError) throw err;
    throw refuse(method, 'runtime_error', err instanceof Error ? err.message : String(err), 'downstream_error');
  }
}

function abandonable(method: string, signal: AbortSignal, start: () => Promise<unknown>): Promise<unknown> {
  const aborted = () => refuse(method, 'runtime_error', `${method} was abandoned by the runner`, 'aborted');
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    start()
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A transport that validates params like the host and answers from `handlers`. */
function handlerTransport(handlers: ApiHandlers): ApiTransport {
  const streams = new Map<string, (chunk: MessageChunk) => void>();
  return {
    async request(method, params, opts) {
      // Like the plugin transport: an abandoned call rejects at once, whatever the handler still does.
      if (opts.signal) return abandonable(method, opts.signal, () => this.request(method, params, { timeoutMs: opts.timeoutMs }));
      if (!isProxyMethod(method))
        throw new ApiCallError(method, {
          code: 'not_found',
          message: `method not found: ${method}`,
          retryable: false,
          details: { reason: 'method_not_found' },
        });
      const streamId = typeof params.stream_id === 'string' ? params.stream_id : null;
      const tools = {
        chunk: (chunk: Partial<MessageChunk>) => {
          const listener = streamId ? streams.get(streamId) : undefined;
          listener?.({ role: 'assistant', is_final: false, msg_sequence: 0, ...chunk });
        },
      };
      return answer(method, handlers, params, tools);
    },
    onStreamChunk(stream_id, listener) {
      streams.set(stream_id, listener);
      return () => streams.delete(stream_id);
    },
  };
}

/**
 * Runs `runnerName` of `plugin` in this process and returns every result it produced, stamped
 * as the host would receive them.
 * @example
 * const results = await runInProcess(plugin, 'default', { input: { text: 'hi' } });
 * expect(results.at(-1)?.type).toBe('run.completed');
 */
export async function runInProcess(
  plugin: Plugin,
  runnerName: string,
  context: ContextOverrides = {},
  opts: { api?: ApiHandlers; signal?: AbortSignal } = {},
): Promise<RunnerResult[]> {
  const ctx = createTestContext(context);
  const results: RunnerResult[] = [];
  const handle = executeRun(plugin, { run_id: ctx.run_id, runner_name: runnerName, context: ctx }, handlerTransport(opts.api ?? {}), (r) => results.push(r));
  const onAbort = (): void => handle.cancel();
  if (opts.signal?.aborted) onAbort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await handle.done;
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
  return results;
}
