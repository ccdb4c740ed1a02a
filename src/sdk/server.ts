// The plugin side of the JSON-RPC protocol: answers initialize/run/shutdown, multiplexes runs by
// run_id, forwards run/cancel to the run's signal and carries the runner's host API calls.
import {
  ModelStreamChunkSchema,
  RpcMessageSchema,
  RunCancelParamsSchema,
  RunParamsSchema,
  WIRE_METHODS,
  type InitializeResult,
  type MessageChunk,
  type RpcResponse,
} from '../core/protocol/index.js';
import { ApiCallError, apiErrorFromRpc, type ApiTransport } from './client.js';
import type { Plugin } from './define.js';
import { executeRun, type RunHandle } from './execute.js';

const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;

type Outgoing = { method: string; resolve: (value: unknown) => void; reject: (err: Error) => void };

export type PluginServerOptions = {
  plugin: Plugin;
  info: InitializeResult;
  /** Writes one JSON-RPC message as one line. */
  send: (message: Record<string, unknown>) => void;
  /** Called after `shutdown` was answered; the bootstrap exits the process. */
  onShutdown: () => void;
  log?: (line: string) => void;
};

export type PluginServer = {
  /** Feeds one line read from stdin. */
  handleLine(line: string): void;
  /** Aborts every run (stdin closed or shutdown). */
  stopAll(): void;
};

/** Creates the protocol server of one plugin process. */
export function createPluginServer(opts: PluginServerOptions): PluginServer {
  const { plugin, info, send } = opts;
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const runs = new Map<string, RunHandle>();
  const outgoing = new Map<number, Outgoing>();
  const streams = new Map<string, (chunk: MessageChunk) => void>();
  let nextId = 1;

  const transport: ApiTransport = {
    request(method, params, { timeoutMs, signal }) {
      const id = nextId++;
      return new Promise<unknown>((resolve, reject) => {
        const cleanup = (): void => {
          outgoing.delete(id);
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new ApiCallError(method, { code: 'deadline_exceeded', message: `no answer to ${method} within ${timeoutMs} ms`, retryable: true, details: { reason: 'sdk_timeout', timeout_ms: timeoutMs } }));
        }, timeoutMs);
        const onAbort = (): void => {
          cleanup();
          reject(new ApiCallError(method, { code: 'runtime_error', message: `${method} was abandoned by the runner`, retryable: false, details: { reason: 'aborted' } }));
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        outgoing.set(id, {
          method,
          resolve: (value) => {
            cleanup();
            resolve(value);
          },
          reject: (err) => {
            cleanup();
            reject(err);
          },
        });
        send({ jsonrpc: '2.0', id, method, params });
      });
    },
    onStreamChunk(stream_id, listener) {
      streams.set(stream_id, listener);
      return () => streams.delete(stream_id);
    },
  };

  const reply = (id: string | number, result: unknown): void => send({ jsonrpc: '2.0', id, result });
  const replyError = (id: string | number | null, code: number, message: string): void => send({ jsonrpc: '2.0', id, error: { code, message } });

  function startRun(id: string | number, params: unknown): void {
    const parsed = RunParamsSchema.safeParse(params);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      replyError(id, INVALID_PARAMS, `invalid run params: ${issue ? `${issue.path.map(String).join('.')}: ${issue.message}` : 'bad shape'}`);
      return;
    }
    const { run_id } = parsed.data;
    if (runs.has(run_id)) {
      replyError(id, INVALID_PARAMS, `run ${run_id} is already in progress`);
      return;
    }
    const handle = executeRun(plugin, parsed.data, transport, (result) => send({ jsonrpc: '2.0', method: WIRE_METHODS.runResult, params: { run_id, result } }), log);
    runs.set(run_id, handle);
    handle.done
      .then((status) => reply(id, { status }))
      .catch((err: unknown) => {
        log(`run ${run_id} could not be answered: ${err instanceof Error ? err.message : String(err)}`);
        reply(id, { status: 'failed' });
      })
      .finally(() => runs.delete(run_id));
  }

  function onRequest(id: string | number, method: string, params: Record<string, unknown>): void {
    switch (method) {
      case WIRE_METHODS.initialize:
        return reply(id, info);
      case WIRE_METHODS.run:
        return startRun(id, params);
      case WIRE_METHODS.shutdown:
        stopAll();
        reply(id, {});
        return opts.onShutdown();
      default:
        return replyError(id, METHOD_NOT_FOUND, `method not found: ${method}`);
    }
  }

  function onNotification(method: string, params: Record<string, unknown>): void {
    if (method === WIRE_METHODS.runCancel) {
      const parsed = RunCancelParamsSchema.safeParse(params);
      if (parsed.success) runs.get(parsed.data.run_id)?.cancel();
      return;
    }
    if (method === WIRE_METHODS.modelStreamChunk) {
      const parsed = ModelStreamChunkSchema.safeParse(params);
      if (parsed.success) streams.get(parsed.data.stream_id)?.(parsed.data.chunk);
      return;
    }
    log(`ignored an unexpected ${JSON.stringify(method)} notification from the host`);
  }

  function onResponse(message: RpcResponse): void {
    const pending = typeof message.id === 'number' ? outgoing.get(message.id) : undefined;
    if (!pending) return;
    if ('error' in message) pending.reject(apiErrorFromRpc(pending.method, message.error));
    else pending.resolve(message.result);
  }

  function stopAll(): void {
    for (const handle of runs.values()) handle.cancel('the plugin is shutting down');
  }

  return {
    handleLine(line: string): void {
      if (line.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        replyError(null, INVALID_REQUEST, 'the line is not JSON');
        return;
      }
      const parsed = RpcMessageSchema.safeParse(value);
      if (!parsed.success) {
        replyError(null, INVALID_REQUEST, 'the line is not a JSON-RPC 2.0 message');
        return;
      }
      const message = parsed.data;
      if ('method' in message) {
        if ('id' in message) onRequest(message.id, message.method, message.params);
        else onNotification(message.method, message.params);
      } else {
        onResponse(message);
      }
    },
    stopAll,
  };
}
