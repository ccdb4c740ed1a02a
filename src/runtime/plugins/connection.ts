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
import { StderrTail } from './stderr-tail.js';
import { stopEscalating } from '../process/stop.js';
import { endGroup, signalGroup, trackGroup, untrackGroup } from '../process/group.js';
import type { PluginProcess } from './spawn.js';

/** Ids of finished runs remembered to tell "finished" from "unknown" in warnings. */
const FINISHED_RUNS_KEPT = 1000;
/** After the leader exits, how long to wait for its stdio to close before giving up on it. */
const STDIO_CLOSE_WAIT_MS = 2000;

/** A protocol warning that fails nothing (stray results, unexpected messages). */
export type PluginWarning = { identity: string; message: string; run_id?: string };

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
};

export { RpcErrorReply, RpcTimeoutError };

type ActiveRun = { onResult: (result: unknown) => void; settle: (outcome: { reply: RunReply } | { error: Error }) => void };
type StopReason = 'close' | 'kill';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export class StdioPluginConnection implements PluginConnection {
  readonly identity: string;
  readonly pgid: number | null;
  readonly exited: Promise<ConnectionFailure | null>;

  readonly #child: PluginProcess;
  readonly #command: string;
  readonly #onApiCall: ProxyCallHandler;
  readonly #onWarning: (warning: PluginWarning) => void;
  readonly #shutdownTimeoutMs: number;
  readonly #graceMs: number;
  readonly #exitNote: () => string | null;
  readonly #reader: LineSplitter;
  readonly #writer: LineWriter;
  readonly #stderr: StderrTail;
  readonly #peer: RpcPeer<'host'>;
  readonly #runs = new Map<string, ActiveRun>();
  readonly #finishedRuns = new Set<string>();
  #failure: ConnectionFailure | null = null;
  #stopReason: StopReason | null = null;
  #exitStatus: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  #spawnError: Error | null = null;
  #finished = false;
  #closing: Promise<void> | undefined;
  #resolveExited!: (failure: ConnectionFailure | null) => void;

  constructor(opts: ConnectionOptions) {
    this.identity = opts.identity;
    this.#child = opts.child;
    this.#command = opts.command;
    this.#onApiCall = opts.onApiCall;
    this.#onWarning = opts.onWarning ?? (() => undefined);
    this.#shutdownTimeoutMs = opts.shutdownTimeoutMs ?? 1000;
    this.#graceMs = opts.graceMs ?? 2000;
    this.#exitNote = opts.exitNote ?? (() => null);
    this.pgid = opts.child.pid ?? null;
    this.exited = new Promise((resolve) => (this.#resolveExited = resolve));
    this.#writer = new LineWriter(opts.child.stdin);
    this.#reader = createFrameReader((frame) => this.#onFrame(frame));
    this.#stderr = new StderrTail(opts.onStderr);
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
    if (this.pgid !== null) trackGroup(this.pgid);

    const child = opts.child;
    child.stdout.on('data', (chunk: Buffer) => this.#reader.push(chunk));
    // Pipe errors surface as the process's exit; without a listener they would crash lbot.
    child.stdout.on('error', () => undefined);
    child.stderr.on('error', () => undefined);
    // Raw bytes: the tail decodes them itself so invalid UTF-8 is kept escaped, not replaced.
    child.stderr.on('data', (chunk: Buffer) => this.#stderr.push(chunk));
    child.on('error', (err) => this.#onSpawnError(err));
    child.on('exit', (code, signal) => this.#onExit(code, signal));
    child.on('close', () => this.#finish());
  }

  /** The command line the process was started with. */
  get command(): string {
    return this.#command;
  }

  /** Set once the connection has failed or been stopped. */
  get failure(): ConnectionFailure | null {
    return this.#failure;
  }

  /** The spawn error (ENOENT, EACCES) when the process never started. */
  get spawnError(): Error | null {
    return this.#spawnError;
  }

  /** How the process ended, once it has. */
  get exitStatus(): { code: number | null; signal: NodeJS.Signals | null } | null {
    return this.#exitStatus;
  }

  stderrTail(): string {
    return this.#stderr.text();
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
    const ended = this.#endedError();
    if (ended) return Promise.reject(ended);
    return this.#peer.request(method, params, opts);
  }

  run(params: RunParams, onResult: (result: unknown) => void): Promise<RunReply> {
    const { run_id } = params;
    const ended = this.#endedError();
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

  async kill(): Promise<void> {
    this.#stopReason ??= 'kill';
    if (this.pgid !== null) signalGroup(this.pgid, 'SIGKILL');
    await this.exited;
  }

  async #shutdown(): Promise<void> {
    if (this.#finished) return;
    this.#stopReason ??= 'close';
    if (!this.#failure) {
      await this.request(WIRE_METHODS.shutdown, {}, { timeoutMs: this.#shutdownTimeoutMs }).catch(() => undefined);
    }
    await stopEscalating({
      endInput: () => this.#writer.end(),
      signal: (sig) => {
        if (this.pgid !== null) signalGroup(this.pgid, sig);
      },
      exited: this.exited,
      graceMs: this.#graceMs,
    });
  }

  #endedError(): LbotError | null {
    if (this.#failure) return new LbotError(this.#failure.code, this.#failure.message);
    if (this.#stopReason || this.#finished) return new LbotError('cancelled', `plugin ${this.identity} is stopping; no new requests are accepted`);
    return null;
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
    this.#onWarning(run_id === undefined ? { identity: this.identity, message } : { identity: this.identity, message, run_id });
  }

  #onFrame(frame: Frame): void {
    if (this.#isCorrupted()) return;
    if (frame.kind === 'violation') this.#corrupt(frame.violation);
    else this.#peer.receive(frame.message);
  }

  #isCorrupted(): boolean {
    return this.#failure?.code === 'runner.protocol_error';
  }

  /** A bad line poisons the whole channel: fail everything in flight and stop the group. */
  #corrupt(violation: FrameViolation): void {
    if (this.#failure) return;
    const message = `plugin ${this.identity} broke the protocol: ${violation.reason}; the line starts with "${violation.excerpt}"`;
    this.#fail({ code: 'runner.protocol_error', message });
    this.#reader.stop();
    this.#child.stdout.destroy();
    if (this.pgid !== null) signalGroup(this.pgid, 'SIGKILL');
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
    const { signal } = request;
    const call: ProxyCall = {
      caller_plugin: this.identity,
      method,
      params,
      signal,
      notify: (notifyMethod, notifyParams) => {
        if (!signal.aborted) this.#peer.notifyRaw(notifyMethod, notifyParams);
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

  #onSpawnError(err: Error): void {
    if (this.pgid !== null) {
      this.#warn(`process error: ${err.message}`);
      return;
    }
    this.#spawnError = err;
    this.#fail({ code: 'runner.start_failed', message: `could not start plugin ${this.identity} (${this.#command}): ${err.message}` });
    // Without a pid there is no 'exit' event to wait for.
    queueMicrotask(() => this.#finish());
  }

  #onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.#exitStatus = { code, signal };
    // Children the plugin left in its group (or its sandbox) must not outlive it.
    if (this.pgid !== null) endGroup(this.pgid);
    const timer = setTimeout(() => {
      this.#child.stdout.destroy();
      this.#child.stderr.destroy();
      this.#finish();
    }, STDIO_CLOSE_WAIT_MS);
    timer.unref();
  }

  /** "exited with status 137; it was killed for exceeding its memory limit…" (the sandbox's limit note). */
  describeExit(): string {
    const status = this.#exitStatus;
    if (!status) return 'stopped';
    const how = status.signal ? `was killed by ${status.signal}` : `exited with status ${status.code ?? 'unknown'}`;
    const note = this.#exitNote();
    return note ? `${how}; ${note}` : how;
  }

  /** Runs after the process exited and its stdout was fully read. */
  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#stderr.flush();
    if (this.pgid !== null) untrackGroup(this.pgid);
    this.#child.stdin.destroy();
    if (!this.#failure && !this.#stopReason) {
      const inFlight = this.#runs.size;
      const during =
        inFlight > 0 ? ` while ${plural(inFlight, 'run')} (${[...this.#runs.keys()].join(', ')}) ${inFlight === 1 ? 'was' : 'were'} in flight` : '';
      const tail = this.#stderr.text().trim();
      this.#fail({
        code: 'runner.crashed',
        message: `plugin ${this.identity} ${this.describeExit()}${during}${tail ? `; last stderr lines:\n${tail}` : '; it wrote nothing to stderr'}`,
      });
    }
    this.#rejectAll('end');
    this.#resolveExited(this.#failure);
  }

  #fail(failure: ConnectionFailure): void {
    if (this.#failure || this.#stopReason) return;
    this.#failure = failure;
    this.#rejectAll('fail');
  }

  /** Fails every request and run in flight; at the end, inbound calls are aborted too. */
  #rejectAll(how: 'fail' | 'end'): void {
    const error =
      this.#failure !== null
        ? new LbotError(this.#failure.code, this.#failure.message, { details: this.#failureDetails() })
        : new LbotError('cancelled', `plugin ${this.identity} was stopped by the host`);
    if (how === 'end') this.#peer.end(error);
    else this.#peer.failPending(error);
    for (const run of [...this.#runs.values()]) run.settle({ error });
  }

  #failureDetails(): Record<string, unknown> {
    const details: Record<string, unknown> = { plugin: this.identity, stderr_tail: this.#stderr.text() };
    if (this.#exitStatus) {
      details.exit_code = this.#exitStatus.code;
      details.signal = this.#exitStatus.signal;
    }
    return details;
  }
}
