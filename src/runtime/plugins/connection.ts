// One live plugin process speaking JSON-RPC over stdio: request correlation, run multiplexing,
// proxy calls stamped with the connection's identity, and escalating shutdown (architecture.md §4).
import { LbotError } from '../../core/errors.js';
import { toApiError } from '../../core/host/api-error.js';
import type { ConnectionFailure, PluginConnection, ProxyCall, ProxyCallHandler } from '../../core/host/ports.js';
import {
  RPC_ERROR_CODES,
  RpcErrorReply,
  RpcPeer,
  RpcReplyError,
  RpcResultError,
  RpcTimeoutError,
  RunResultNotificationSchema,
  WIRE_METHODS,
  isProxyMethod,
  LineWriter,
  type Coalesce,
  type LineSplitter,
  type ControlParamsInput,
  type ControlRequest,
  type ControlResult,
  type InboundRequest,
  type JsonObject,
  type RunParams,
  type RunReply,
} from '../../core/protocol/index.js';
import { createFrameReader, type Frame, type FrameViolation } from './framing.js';
import { PluginProcessLifecycle, type PluginWarning } from './plugin-process.js';
import type { PluginProcess } from './spawn.js';

/** Ids of finished runs remembered to tell "finished" from "unknown" in warnings. */
const FINISHED_RUNS_KEPT = 1000;

export type { PluginWarning };

export type ConnectionOptions = {
  identity: string;
  child: PluginProcess;
  /** Printable command line, for error messages. */
  command: string;
  onApiCall: ProxyCallHandler;
  onWarning?: (warning: PluginWarning) => void;
  onStderr?: (line: string) => void;
  /** Wait for the `shutdown` answer in close(); default 1000 ms. */
  shutdownTimeoutMs?: number;
  /** Each grace period of close(): after ending stdin and after SIGTERM; default 2000 ms. */
  graceMs?: number;
  /** Why the sandbox stopped the process (a limit), read once it exited. */
  exitNote?: () => string | null;
  /** How the lines to the plugin are gathered into writes (LineWriter); default each at once. */
  coalesce?: Coalesce | undefined;
};

export { RpcErrorReply, RpcTimeoutError };

type ActiveRun = { onResult: (result: unknown) => void; settle: (outcome: { reply: RunReply } | { error: Error }) => void };

export class StdioPluginConnection implements PluginConnection {
  readonly identity: string;
  readonly pgid: number | null;
  readonly exited: Promise<ConnectionFailure | null>;

  readonly #process: PluginProcessLifecycle;
  readonly #onApiCall: ProxyCallHandler;
  readonly #shutdownTimeoutMs: number;
  readonly #reader: LineSplitter;
  readonly #writer: LineWriter;
  readonly #peer: RpcPeer<'host'>;
  readonly #runs = new Map<string, ActiveRun>();
  readonly #finishedRuns = new Set<string>();
  #closing: Promise<void> | undefined;

  constructor(opts: ConnectionOptions) {
    this.identity = opts.identity;
    this.#onApiCall = opts.onApiCall;
    this.#shutdownTimeoutMs = opts.shutdownTimeoutMs ?? 1000;
    this.#writer = new LineWriter(opts.child.stdin, { coalesce: opts.coalesce });
    this.#reader = createFrameReader((frame) => this.#onFrame(frame));
    this.#process = new PluginProcessLifecycle({
      ...opts,
      onStdout: (chunk) => this.#reader.push(chunk),
      inFlight: () => [...this.#runs.keys()],
      onEnd: (error, how) => this.#rejectAll(error, how),
    });
    this.pgid = this.#process.pgid;
    this.exited = this.#process.exited;
    this.#peer = new RpcPeer('host', {
      send: (message) => this.#writer.write(message),
      onRequest: (request) => this.#onRequest(request),
      onNotification: (method, params) => this.#onNotification(method, params),
      onStrayResponse: (id) => this.#warn(`ignored a response to unknown request id ${JSON.stringify(id)}`),
      onAnswerFailed: (method, err) => this.#warn(`could not answer ${method}: ${err instanceof Error ? err.message : String(err)}`),
      toRpcError: (err) => {
        const apiError = toApiError(err);
        return { code: RPC_ERROR_CODES.apiError, message: apiError.message, data: apiError.toWire() };
      },
      errors: {
        timeout: (method, ms) => new RpcTimeoutError(`plugin ${this.identity} did not answer ${method} within ${ms} ms`),
        aborted: (method) => new LbotError('cancelled', `${method} request to plugin ${this.identity} was cancelled`),
      },
    });
  }

  /** The command line the process was started with. */
  get command(): string {
    return this.#process.command;
  }

  /** Set once the connection has failed or been stopped. */
  get failure(): ConnectionFailure | null {
    return this.#process.failure;
  }

  /** The spawn error (ENOENT, EACCES) when the process never started. */
  get spawnError(): Error | null {
    return this.#process.spawnError;
  }

  /** How the process ended, once it has. */
  get exitStatus(): { code: number | null; signal: NodeJS.Signals | null } | null {
    return this.#process.exitStatus;
  }

  stderrTail(): string {
    return this.#process.stderrTail();
  }

  get accepting(): boolean {
    return this.#process.accepting;
  }

  activeRuns(): readonly string[] {
    return [...this.#runs.keys()];
  }

  /** Sends a host → plugin control request; rejects with RpcErrorReply, RpcTimeoutError, RpcResultError or the connection's end. */
  request<M extends ControlRequest<'host'>>(
    method: M,
    params: ControlParamsInput<M>,
    opts: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<ControlResult<M>> {
    const ended = this.#process.endedError();
    if (ended) return Promise.reject(ended);
    return this.#peer.request(method, params, opts);
  }

  run(params: RunParams, onResult: (result: unknown) => void): Promise<RunReply> {
    const { run_id } = params;
    const ended = this.#process.endedError();
    if (ended) return Promise.reject(ended);
    if (this.#runs.has(run_id)) {
      return Promise.reject(new LbotError('internal', `run ${run_id} is already in flight on plugin ${this.identity}`));
    }
    return new Promise<RunReply>((resolve, reject) => {
      this.#runs.set(run_id, {
        onResult,
        settle: (outcome) => {
          if (!this.#runs.delete(run_id)) return;
          this.#rememberFinished(run_id);
          if ('reply' in outcome) resolve(outcome.reply);
          else reject(outcome.error);
        },
      });
      const settle = (outcome: { reply: RunReply } | { error: Error }): void => this.#runs.get(run_id)?.settle(outcome);
      this.request(WIRE_METHODS.run, params).then(
        (reply) => settle({ reply }),
        (err: unknown) => settle({ error: this.#runError(run_id, err) }),
      );
    });
  }

  cancel(run_id: string): void {
    if (!this.#runs.has(run_id)) return;
    this.#peer.notify(WIRE_METHODS.runCancel, { run_id });
  }

  close(): Promise<void> {
    return (this.#closing ??= this.#shutdown());
  }

  kill(): Promise<void> {
    return this.#process.kill();
  }

  #shutdown(): Promise<void> {
    return this.#process.stop(
      () => this.request(WIRE_METHODS.shutdown, {}, { timeoutMs: this.#shutdownTimeoutMs }).then(() => undefined),
      () => this.#writer.end(),
    );
  }

  #runError(run_id: string, err: unknown): Error {
    if (err instanceof RpcResultError) {
      return new LbotError(
        'runner.protocol_error',
        `plugin ${this.identity} answered run ${run_id} with ${JSON.stringify(err.raw)?.slice(0, 200)}; expected {"status": "completed" | "failed" | "cancelled"}`,
      );
    }
    if (err instanceof RpcErrorReply) {
      return new LbotError('runner.protocol_error', `plugin ${this.identity} answered run ${run_id} with a JSON-RPC error ${err.rpcCode}: ${err.message}`, {
        details: { rpc_code: err.rpcCode },
      });
    }
    return err instanceof Error ? err : new LbotError('internal', String(err));
  }

  #rememberFinished(run_id: string): void {
    this.#finishedRuns.add(run_id);
    if (this.#finishedRuns.size > FINISHED_RUNS_KEPT) {
      const oldest = this.#finishedRuns.values().next().value;
      if (oldest !== undefined) this.#finishedRuns.delete(oldest);
    }
  }

  #warn(message: string, run_id?: string): void {
    this.#process.warn(message, run_id);
  }

  #onFrame(frame: Frame): void {
    if (this.#process.isCorrupted()) return;
    if (frame.kind === 'violation') this.#corrupt(frame.violation);
    else this.#peer.receive(frame.message);
  }

  /** A bad line poisons the whole channel: fail everything in flight and stop the group. */
  #corrupt(violation: FrameViolation): void {
    if (this.#process.failure) return;
    this.#reader.stop();
    this.#process.corrupt(`plugin ${this.identity} broke the protocol: ${violation.reason}; the line starts with "${violation.excerpt}"`);
  }

  #onNotification(method: string, params: JsonObject): void {
    if (method !== WIRE_METHODS.runResult) {
      this.#warn(`ignored an unexpected ${JSON.stringify(method)} notification`);
      return;
    }
    const parsed = RunResultNotificationSchema.safeParse(params);
    const rawRunId = params.run_id;
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const why = issue ? `${issue.path.map(String).join('.') || '(params)'}: ${issue.message}` : 'invalid params';
      if (typeof rawRunId === 'string' && this.#runs.has(rawRunId)) {
        this.#failRun(rawRunId, `plugin ${this.identity} sent a malformed run/result for run ${rawRunId} (${why})`);
      } else {
        this.#warn(`dropped a malformed run/result (${why})`, typeof rawRunId === 'string' ? rawRunId : undefined);
      }
      return;
    }
    const { run_id, result } = parsed.data;
    const run = this.#runs.get(run_id);
    if (!run) {
      const state = this.#finishedRuns.has(run_id) ? 'finished' : 'unknown';
      this.#warn(`protocol error: plugin ${this.identity} sent a run/result for ${state} run ${run_id}; dropped, no run in flight is affected`, run_id);
      return;
    }
    run.onResult(result);
  }

  /** Breaks one run's rules: that run fails with runner.protocol_error and the runner is told to stop. */
  #failRun(run_id: string, message: string): void {
    this.cancel(run_id);
    this.#runs.get(run_id)?.settle({ error: new LbotError('runner.protocol_error', message) });
  }

  #onRequest(request: InboundRequest): Promise<unknown> {
    const { method } = request;
    // The caller identity comes from the connection alone (runner-protocol.md §1.3).
    const params: Record<string, unknown> = { ...request.params };
    delete params.caller_plugin_identity;
    const call: ProxyCall = {
      caller_plugin: this.identity,
      method,
      params,
      // Read only by the handlers that can be cancelled: the signal is made on first use (protocol/peer.ts).
      get signal() {
        return request.signal;
      },
      notify: (notifyMethod, notifyParams) => {
        if (!request.signal.aborted) this.#peer.notifyRaw(notifyMethod, notifyParams);
      },
    };
    if (isProxyMethod(method)) return Promise.resolve().then(() => this.#onApiCall(call));
    // The host refuses (and audits) the unknown method before the refusal is answered; the run
    // that called it fails once the plugin has its answer.
    const runId = request.params.run_id;
    request.afterAnswer(() => {
      if (typeof runId === 'string' && this.#runs.has(runId)) {
        this.#failRun(runId, `plugin ${this.identity} called unknown host method ${JSON.stringify(method)} during run ${runId}`);
      } else {
        this.#warn(`answered unknown method ${JSON.stringify(method)} with ${RPC_ERROR_CODES.methodNotFound}`, typeof runId === 'string' ? runId : undefined);
      }
    });
    const refusal = new RpcReplyError(RPC_ERROR_CODES.methodNotFound, `method not found: ${method}`);
    return Promise.resolve()
      .then(() => this.#onApiCall({ ...call, signal: new AbortController().signal, notify: () => undefined }))
      .then(
        () => Promise.reject(refusal),
        () => Promise.reject(refusal),
      );
  }

  /** "exited with status 137; it was killed for exceeding its memory limit…" (the sandbox's limit note). */
  describeExit(): string {
    return this.#process.describeExit();
  }

  /** Fails every request and run in flight; at the end, inbound calls are aborted too. */
  #rejectAll(error: LbotError, how: 'fail' | 'end'): void {
    if (how === 'end') this.#peer.end(error);
    else this.#peer.failPending(error);
    for (const run of [...this.#runs.values()]) run.settle({ error });
  }
}
