// The plugin side of the JSON-RPC protocol: answers initialize/run/shutdown, multiplexes runs by
// run_id, forwards run/cancel to the run's signal and carries the runner's host API calls.
import {
  RPC_ERROR_CODES,
  parseRpcMessage,
  RpcPeer,
  RpcReplyError,
  WIRE_METHODS,
  controlMethods,
  type InboundRequest,
  type InitializeResult,
  type JsonObject,
  type MessageChunk,
} from '../core/protocol/index.js';
import { ApiCallError, apiErrorFromRpc, type ApiTransport } from './client.js';
import type { Plugin } from './define.js';
import { executeRun, type RunHandle } from './execute.js';

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

// Over 100 lines because it is one closure: the peer, the run handles and the model streams are shared
// by every request handler; framing is core/protocol/lines.ts, the peer core/protocol/peer.ts.
/** Creates the protocol server of one plugin process. */
export function createPluginServer(opts: PluginServerOptions): PluginServer {
  const { plugin, info, send } = opts;
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const runs = new Map<string, RunHandle>();
  const streams = new Map<string, (chunk: MessageChunk) => void>();

  const peer = new RpcPeer('plugin', {
    send,
    onRequest,
    onNotification,
    errors: {
      reply: apiErrorFromRpc,
      timeout: (method, timeoutMs) =>
        new ApiCallError(method, {
          code: 'deadline_exceeded',
          message: `no answer to ${method} within ${timeoutMs} ms`,
          retryable: true,
          details: { reason: 'sdk_timeout', timeout_ms: timeoutMs },
        }),
      aborted: (method) =>
        new ApiCallError(method, { code: 'runtime_error', message: `${method} was abandoned by the runner`, retryable: false, details: { reason: 'aborted' } }),
    },
  });

  const transport: ApiTransport = {
    request: (method, params, { timeoutMs, signal }) => peer.requestRaw(method, params, { timeoutMs, signal }),
    onStreamChunk(stream_id, listener) {
      streams.set(stream_id, listener);
      return () => streams.delete(stream_id);
    },
  };

  function startRun(params: JsonObject): Promise<{ status: string }> {
    const parsed = controlMethods[WIRE_METHODS.run].params.safeParse(params);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new RpcReplyError(
        RPC_ERROR_CODES.invalidParams,
        `invalid run params: ${issue ? `${issue.path.map(String).join('.')}: ${issue.message}` : 'bad shape'}`,
      );
    }
    const { run_id } = parsed.data;
    if (runs.has(run_id)) throw new RpcReplyError(RPC_ERROR_CODES.invalidParams, `run ${run_id} is already in progress`);
    const handle = executeRun(plugin, parsed.data, transport, (result) => peer.notify(WIRE_METHODS.runResult, { run_id, result }), log);
    runs.set(run_id, handle);
    return handle.done
      .then((status) => ({ status }))
      .catch((err: unknown) => {
        log(`run ${run_id} could not be answered: ${err instanceof Error ? err.message : String(err)}`);
        return { status: 'failed' };
      })
      .finally(() => runs.delete(run_id));
  }

  function onRequest(request: InboundRequest): unknown {
    switch (request.method) {
      case WIRE_METHODS.initialize:
        return info;
      case WIRE_METHODS.run:
        return startRun(request.params);
      case WIRE_METHODS.shutdown:
        stopAll();
        request.afterAnswer(opts.onShutdown);
        return {};
      default:
        throw new RpcReplyError(RPC_ERROR_CODES.methodNotFound, `method not found: ${request.method}`);
    }
  }

  function onNotification(method: string, params: JsonObject): void {
    if (method === WIRE_METHODS.runCancel) {
      const parsed = controlMethods[method].params.safeParse(params);
      if (parsed.success) runs.get(parsed.data.run_id)?.cancel();
      return;
    }
    if (method === WIRE_METHODS.modelStreamChunk) {
      const parsed = controlMethods[method].params.safeParse(params);
      if (parsed.success) streams.get(parsed.data.stream_id)?.(parsed.data.chunk);
      return;
    }
    log(`ignored an unexpected ${JSON.stringify(method)} notification from the host`);
  }

  function stopAll(): void {
    for (const handle of runs.values()) handle.cancel('the plugin is shutting down');
  }

  const refuseLine = (message: string): void => send({ jsonrpc: '2.0', id: null, error: { code: RPC_ERROR_CODES.invalidRequest, message } });

  return {
    handleLine(line: string): void {
      if (line.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        refuseLine('the line is not JSON');
        return;
      }
      const parsed = parseRpcMessage(value);
      if (!parsed.success) {
        refuseLine('the line is not a JSON-RPC 2.0 message');
        return;
      }
      peer.receive(parsed.data);
    },
    stopAll,
  };
}
