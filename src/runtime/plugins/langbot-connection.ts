// One live LangBot SDK plugin process on stdio (docs/langbot-plugins.md): the register handshake,
// `run_agent` streams, plugin → host actions translated onto lbot's proxy table, cancel through
// `run_get`, and the same stop escalation and crash reporting as lbot's own connection.
import { randomInt } from 'node:crypto';
import type { Writable } from 'node:stream';
import { LbotError } from '../../core/errors.js';
import { toApiError } from '../../core/host/api-error.js';
import type { ConnectionFailure, PluginConnection, ProxyCall, ProxyCallHandler } from '../../core/host/ports.js';
import { isRecord } from '../../core/json.js';
import type { JsonObject, RunParams, RunReply } from '../../core/protocol/index.js';
import { forwardedAction, isLocalAction, modelCallParams, type LocalAction } from '../../core/protocol/langbot/actions.js';
import { LangbotDecoder, LangbotEncodeError, encodeLangbotMessage } from '../../core/protocol/langbot/codec.js';
import { toLangbotContext } from '../../core/protocol/langbot/context.js';
import { LANGBOT_MAX_ERROR_MESSAGE, type LangbotRequest, type LangbotResponse } from '../../core/protocol/langbot/frames.js';
import { stopEscalating } from '../process/stop.js';
import type { PluginWarning } from './connection.js';
import { StderrTail } from './stderr-tail.js';
import { endGroup, signalGroup, trackGroup, untrackGroup } from '../process/group.js';
import type { PluginProcess } from './spawn.js';

/** The SDK's own cap of in-flight actions per connection; beyond it calls are answered "busy". */
const MAX_INBOUND = 128;
const FINISHED_RUNS_KEPT = 1000;
const STDIO_CLOSE_WAIT_MS = 2000;
/** The version `get_langbot_version` reports: the LangBot line whose SDK wire lbot speaks. */
export const LANGBOT_COMPAT_VERSION = '4.11.0';

export type LangbotConnectionOptions = {
  identity: string;
  child: PluginProcess;
  command: string;
  onApiCall: ProxyCallHandler;
  onWarning?: (warning: PluginWarning) => void;
  onStderr?: (line: string) => void;
  shutdownTimeoutMs?: number;
  graceMs?: number;
  exitNote?: () => string | null;
};

/** What `register_plugin` carried: the container the plugin describes itself with. */
export type Registration = { seq_id: number; data: Record<string, unknown> };

type Pending = { onFrame: (frame: LangbotResponse) => void; fail: (err: Error) => void };
type ActiveRun = {
  onResult: (result: unknown) => void;
  settle: (outcome: { reply: RunReply } | { error: Error }) => void;
  cancelRequestedAt: number | null;
  terminal: 'completed' | 'failed' | null;
};

/** An answer the connection sends back for a plugin's action. */
class ActionRefusal extends Error {
  constructor(
    readonly wire: { code: string; message: string; retryable: boolean; details: Record<string, unknown> },
    readonly exceptionName = 'AgentAPIError',
  ) {
    super(wire.message);
  }
}

function unsupported(action: string): ActionRefusal {
  return new ActionRefusal({
    code: 'unsupported',
    message: `lbot does not implement the LangBot action ${JSON.stringify(action)}`,
    retryable: false,
    details: { action },
  });
}

/** A small line queue that respects `drain`; lines are already encoded. */
class LineQueue {
  #queue: string[] = [];
  #blocked = false;
  #closed = false;
  constructor(private readonly stream: Writable) {
    stream.on('drain', () => this.#flush());
    stream.on('error', () => {
      this.#closed = true;
      this.#queue = [];
    });
  }
  write(lines: readonly string[]): void {
    if (this.#closed || this.stream.destroyed || this.stream.writableEnded) return;
    for (const line of lines) {
      if (this.#blocked) this.#queue.push(line);
      else if (!this.stream.write(line)) this.#blocked = true;
    }
  }
  end(): void {
    if (this.#closed) return;
    this.#closed = true;
    const rest = this.#queue.join('');
    this.#queue = [];
    if (!this.stream.destroyed && !this.stream.writableEnded) this.stream.end(rest);
  }
  #flush(): void {
    this.#blocked = false;
    while (this.#queue.length > 0 && !this.#blocked) {
      const line = this.#queue.shift();
      if (line !== undefined && !this.stream.write(line)) this.#blocked = true;
    }
  }
}

export class LangbotPluginConnection implements PluginConnection {
  readonly identity: string;
  readonly pgid: number | null;
  readonly exited: Promise<ConnectionFailure | null>;
  readonly command: string;

  readonly #child: PluginProcess;
  readonly #onApiCall: ProxyCallHandler;
  readonly #onWarning: (warning: PluginWarning) => void;
  readonly #shutdownTimeoutMs: number;
  readonly #graceMs: number;
  readonly #exitNote: () => string | null;
  readonly #decoder = new LangbotDecoder();
  readonly #out: LineQueue;
  readonly #stderr: StderrTail;
  readonly #pending = new Map<number, Pending>();
  readonly #runs = new Map<string, ActiveRun>();
  readonly #finishedRuns = new Map<string, 'completed' | 'failed' | 'cancelled'>();
  readonly #inbound = new Map<number, AbortController>();
  #seq = randomInt(1, 2 ** 30);
  #registration: Registration | null = null;
  #onRegistration: ((r: Registration) => void) | null = null;
  #failure: ConnectionFailure | null = null;
  #stopReason: 'close' | 'kill' | null = null;
  #exitStatus: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  #spawnError: Error | null = null;
  #finished = false;
  #closing: Promise<void> | undefined;
  #resolveExited!: (failure: ConnectionFailure | null) => void;

  constructor(opts: LangbotConnectionOptions) {
    this.identity = opts.identity;
    this.command = opts.command;
    this.#child = opts.child;
    this.#onApiCall = opts.onApiCall;
    this.#onWarning = opts.onWarning ?? (() => undefined);
    this.#shutdownTimeoutMs = opts.shutdownTimeoutMs ?? 1000;
    this.#graceMs = opts.graceMs ?? 2000;
    this.#exitNote = opts.exitNote ?? (() => null);
    this.pgid = opts.child.pid ?? null;
    this.exited = new Promise((resolve) => (this.#resolveExited = resolve));
    this.#out = new LineQueue(opts.child.stdin);
    this.#stderr = new StderrTail(opts.onStderr);
    if (this.pgid !== null) trackGroup(this.pgid);
    const child = opts.child;
    child.stdout.on('data', (chunk: Buffer) => this.#onStdout(chunk));
    child.stdout.on('error', () => undefined);
    child.stderr.on('error', () => undefined);
    child.stderr.on('data', (chunk: Buffer) => this.#stderr.push(chunk));
    child.on('error', (err) => this.#onSpawnError(err));
    child.on('exit', (code, signal) => this.#onExit(code, signal));
    child.on('close', () => this.#finish());
  }

  get failure(): ConnectionFailure | null {
    return this.#failure;
  }
  get spawnError(): Error | null {
    return this.#spawnError;
  }
  get exitStatus(): { code: number | null; signal: NodeJS.Signals | null } | null {
    return this.#exitStatus;
  }

  stderrTail(): string {
    return this.#stderr.text();
  }

  activeRuns(): readonly string[] {
    return [...this.#runs.keys()];
  }

  /** Resolves with the plugin's `register_plugin` request (it speaks first), or rejects when the process ends. */
  registration(): Promise<Registration> {
    if (this.#registration) return Promise.resolve(this.#registration);
    const ended = this.#endedError();
    if (ended) return Promise.reject(ended);
    return new Promise((resolve, reject) => {
      this.#onRegistration = resolve;
      void this.exited.then(() => reject(this.#endedError() ?? new LbotError('runner.crashed', `plugin ${this.identity} ended before registering`)));
    });
  }

  /** Answers `register_plugin` (after `initialize_plugin` and `get_plugin_container`, as LangBot's runtime does). */
  acceptRegistration(seq_id: number): void {
    this.#send({ seq_id, code: 0, message: 'success', data: {}, chunk_status: 'end' });
  }

  /** Sends one host → plugin request and resolves with its first answer frame; code ≠ 0 rejects. */
  request(action: string, data: Record<string, unknown>, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<unknown> {
    const ended = this.#endedError();
    if (ended) return Promise.reject(ended);
    return new Promise((resolve, reject) => {
      const seq_id = this.#nextSeq();
      const done = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        this.#pending.delete(seq_id);
      };
      const timer = setTimeout(() => {
        done();
        reject(new LbotError('runner.start_failed', `plugin ${this.identity} did not answer ${action} within ${opts.timeoutMs} ms`));
      }, opts.timeoutMs);
      timer.unref();
      const onAbort = () => {
        done();
        reject(new LbotError('cancelled', `${action} request to plugin ${this.identity} was cancelled`));
      };
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(seq_id, {
        onFrame: (frame) => {
          done();
          if (frame.code === 0) resolve(frame.data);
          else reject(new LbotError('runner.protocol_error', `plugin ${this.identity} refused ${action}: ${frame.message}`));
        },
        fail: (err) => {
          done();
          reject(err);
        },
      });
      this.#send({ seq_id, action, data });
    });
  }

  run(params: RunParams, onResult: (result: unknown) => void): Promise<RunReply> {
    const { run_id } = params;
    const ended = this.#endedError();
    if (ended) return Promise.reject(ended);
    if (this.#runs.has(run_id)) return Promise.reject(new LbotError('internal', `run ${run_id} is already in flight on plugin ${this.identity}`));
    return new Promise<RunReply>((resolve, reject) => {
      const seq_id = this.#nextSeq();
      const run: ActiveRun = {
        onResult,
        cancelRequestedAt: null,
        terminal: null,
        settle: (outcome) => {
          if (this.#runs.get(run_id) !== run) return;
          this.#runs.delete(run_id);
          this.#pending.delete(seq_id);
          this.#rememberFinished(run_id, 'reply' in outcome ? outcome.reply.status : 'failed');
          if ('reply' in outcome) resolve(outcome.reply);
          else reject(outcome.error);
        },
      };
      this.#runs.set(run_id, run);
      this.#pending.set(seq_id, {
        onFrame: (frame) => this.#onRunFrame(run_id, run, frame),
        fail: (err) => run.settle({ error: err }),
      });
      this.#send({ seq_id, action: 'run_agent', data: { runner_name: params.runner_name, context: toLangbotContext(params.context) } });
    });
  }

  /** There is no cancel action on this wire: the run is flagged for `run_get`; lbot's grace and kill follow. */
  cancel(run_id: string): void {
    const run = this.#runs.get(run_id);
    if (run && run.cancelRequestedAt === null) run.cancelRequestedAt = Math.floor(Date.now() / 1000);
  }

  close(): Promise<void> {
    return (this.#closing ??= this.#shutdown());
  }

  async kill(): Promise<void> {
    this.#stopReason ??= 'kill';
    if (this.pgid !== null) signalGroup(this.pgid, 'SIGKILL');
    await this.exited;
  }

  describeExit(): string {
    const status = this.#exitStatus;
    if (!status) return 'stopped';
    const how = status.signal ? `was killed by ${status.signal}` : `exited with status ${status.code ?? 'unknown'}`;
    const note = this.#exitNote();
    return note ? `${how}; ${note}` : how;
  }

  async #shutdown(): Promise<void> {
    if (this.#finished) return;
    this.#stopReason ??= 'close';
    // In --prod mode `shutdown` is only acknowledged; the plugin exits on stdin EOF.
    if (!this.#failure && this.#registration) {
      await this.request('shutdown', {}, { timeoutMs: this.#shutdownTimeoutMs }).catch(() => undefined);
    }
    await stopEscalating({
      endInput: () => this.#out.end(),
      signal: (sig) => {
        if (this.pgid !== null) signalGroup(this.pgid, sig);
      },
      exited: this.exited,
      graceMs: this.#graceMs,
    });
  }

  #nextSeq(): number {
    this.#seq = this.#seq >= 2 ** 31 ? 1 : this.#seq + 1;
    return this.#seq;
  }

  #send(message: Record<string, unknown>): void {
    let lines: string[];
    try {
      lines = encodeLangbotMessage(message);
    } catch (err) {
      if (!(err instanceof LangbotEncodeError) || typeof message.seq_id !== 'number' || 'action' in message) throw err;
      // An answer too large for the wire becomes an error answer, never a line the plugin would drop.
      lines = encodeLangbotMessage({
        seq_id: message.seq_id,
        code: 1,
        message: `AgentAPIError: ${err.message}`,
        data: { error: { code: 'payload_too_large', message: err.message, retryable: false, details: {} } },
        chunk_status: 'end',
      });
    }
    this.#out.write(lines);
  }

  #endedError(): LbotError | null {
    if (this.#failure) return new LbotError(this.#failure.code, this.#failure.message);
    if (this.#stopReason || this.#finished) return new LbotError('cancelled', `plugin ${this.identity} is stopping; no new requests are accepted`);
    return null;
  }

  #rememberFinished(run_id: string, status: 'completed' | 'failed' | 'cancelled'): void {
    this.#finishedRuns.set(run_id, status);
    if (this.#finishedRuns.size > FINISHED_RUNS_KEPT) {
      const oldest = this.#finishedRuns.keys().next().value;
      if (oldest !== undefined) this.#finishedRuns.delete(oldest);
    }
  }

  #warn(message: string, run_id?: string): void {
    this.#onWarning(run_id === undefined ? { identity: this.identity, message } : { identity: this.identity, message, run_id });
  }

  #onStdout(chunk: Buffer): void {
    if (this.#failure?.code === 'runner.protocol_error') return;
    const out = this.#decoder.push(chunk);
    for (const frame of out.frames) {
      if (frame.kind === 'response') this.#onResponse(frame.response);
      else this.#onRequest(frame.request);
    }
    if (out.violation) this.#corrupt(out.violation);
  }

  #corrupt(reason: string): void {
    if (this.#failure) return;
    this.#fail({ code: 'runner.protocol_error', message: `plugin ${this.identity} broke the LangBot wire: ${reason}` });
    this.#child.stdout.destroy();
    if (this.pgid !== null) signalGroup(this.pgid, 'SIGKILL');
  }

  #onResponse(frame: LangbotResponse): void {
    const pending = this.#pending.get(frame.seq_id);
    if (!pending) {
      this.#warn(`ignored a response to unknown seq_id ${frame.seq_id}`);
      return;
    }
    pending.onFrame(frame);
  }

  /** `continue` frames carry one AgentRunResult each; `end` closes the stream. */
  #onRunFrame(run_id: string, run: ActiveRun, frame: LangbotResponse): void {
    if (frame.code !== 0) {
      run.settle({
        error: new LbotError(
          'runner.protocol_error',
          `plugin ${this.identity} answered run_agent for run ${run_id} with an error: ${frame.message.slice(0, 500)}`,
        ),
      });
      return;
    }
    const data = frame.data;
    if (isRecord(data) && Object.keys(data).length > 0) {
      if (data.type === 'run.completed') run.terminal = 'completed';
      else if (data.type === 'run.failed') run.terminal = 'failed';
      run.onResult(data);
    }
    if (frame.chunk_status === 'end') {
      const status = run.cancelRequestedAt !== null && run.terminal !== 'completed' ? 'cancelled' : (run.terminal ?? 'failed');
      run.settle({ reply: { status } });
    }
  }

  #onRequest(request: LangbotRequest): void {
    const { seq_id, action } = request;
    if (action === 'register_plugin') {
      if (this.#registration) {
        this.#answerError(seq_id, new ActionRefusal({ code: 'invalid_argument', message: 'the plugin is already registered', retryable: false, details: {} }));
        return;
      }
      this.#registration = { seq_id, data: request.data };
      this.#onRegistration?.(this.#registration);
      return;
    }
    if (this.#inbound.size >= MAX_INBOUND) {
      this.#answerError(
        seq_id,
        new ActionRefusal({ code: 'rate_limited', message: `more than ${MAX_INBOUND} actions in flight`, retryable: true, details: {} }),
      );
      return;
    }
    const controller = new AbortController();
    this.#inbound.set(seq_id, controller);
    Promise.resolve()
      .then(() => this.#dispatch(request, controller.signal))
      .then(
        (data) => this.#send({ seq_id, code: 0, message: 'success', data, chunk_status: 'end' }),
        (err: unknown) => this.#answerError(seq_id, err),
      )
      .finally(() => this.#inbound.delete(seq_id))
      .catch((err: unknown) => this.#warn(`could not answer ${action}: ${err instanceof Error ? err.message : String(err)}`));
  }

  #answerError(seq_id: number, err: unknown): void {
    const refusal = err instanceof ActionRefusal ? err : null;
    const wire = refusal ? refusal.wire : toApiError(err).toWire();
    const message = `${refusal?.exceptionName ?? 'AgentAPIError'}: ${wire.message}`.slice(0, LANGBOT_MAX_ERROR_MESSAGE);
    this.#send({ seq_id, code: 1, message, data: { error: wire }, chunk_status: 'end' });
  }

  #call(method: string, params: Record<string, unknown>, signal: AbortSignal, notify: ProxyCall['notify'] = () => undefined): Promise<unknown> {
    return this.#onApiCall({ caller_plugin: this.identity, method, params, signal, notify });
  }

  async #dispatch(request: LangbotRequest, signal: AbortSignal): Promise<unknown> {
    const { action, seq_id } = request;
    // The caller identity comes from the connection alone, as on lbot's own wire.
    const { caller_plugin_identity: _ignored, ...data } = request.data;
    const run_id = data.run_id;
    if (isLocalAction(action)) return this.#local(action, data);
    if (action === 'invoke_llm_stream') return this.#stream(seq_id, data, signal);
    const forward = forwardedAction(action);
    if (!forward) {
      // Audited like any call the runner was not given, then answered "unsupported" (never a hang).
      await this.#call(action, { ...data }, new AbortController().signal).catch(() => undefined);
      throw unsupported(action);
    }
    const result = await this.#call(forward.method, { ...forward.params(data), run_id }, signal);
    return forward.result(result);
  }

  #local(action: LocalAction, data: Record<string, unknown>): Record<string, unknown> {
    switch (action) {
      case 'run_get': {
        const target = typeof data.target_run_id === 'string' ? data.target_run_id : data.run_id;
        if (typeof target !== 'string')
          throw new ActionRefusal({ code: 'invalid_argument', message: 'target_run_id is required', retryable: false, details: {} });
        // A runner may only look at runs of its own plugin process.
        const run = this.#runs.get(target);
        if (run) {
          return {
            run_id: target,
            status: run.cancelRequestedAt === null ? 'running' : 'cancelling',
            ...(run.cancelRequestedAt === null ? {} : { cancel_requested_at: run.cancelRequestedAt }),
          };
        }
        const finished = this.#finishedRuns.get(target);
        if (finished) return { run_id: target, status: finished };
        throw new ActionRefusal({ code: 'not_found', message: `no run ${target} on this plugin`, retryable: false, details: {} });
      }
      case 'steering_pull':
        return { items: [] };
      case 'get_prompt':
        return { prompt: [] };
      case 'get_langbot_version':
        return { version: LANGBOT_COMPAT_VERSION };
    }
  }

  /**
   * `invoke_llm_stream`: lbot's `models.stream` chunks carry the text so far; the SDK wants deltas, then
   * a final `is_final` chunk with the tool calls, an optional usage item, then `end`.
   */
  async #stream(seq_id: number, data: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    let sent = '';
    let n = 0;
    const push = (item: JsonObject) => {
      if (!signal.aborted) this.#send({ seq_id, code: 0, message: 'success', data: item, chunk_status: 'continue' });
    };
    const reply = await this.#call('models.stream', { ...modelCallParams(data), run_id: data.run_id }, signal, (_method, params) => {
      const chunk = isRecord(params.chunk) ? params.chunk : {};
      const text = typeof chunk.content === 'string' ? chunk.content : '';
      if (!text.startsWith(sent) || text.length === sent.length) return;
      push({ chunk: { role: 'assistant', content: text.slice(sent.length), is_final: false, msg_sequence: n++ } });
      sent = text;
    });
    const r = isRecord(reply) ? reply : {};
    const message = isRecord(r.message) ? r.message : {};
    const full = typeof message.content === 'string' ? message.content : '';
    const rest = full.startsWith(sent) ? full.slice(sent.length) : '';
    push({ chunk: { role: 'assistant', content: rest, tool_calls: message.tool_calls ?? null, is_final: true, msg_sequence: n++ } });
    if (isRecord(r.usage)) push({ usage: r.usage });
    return {};
  }

  #onSpawnError(err: Error): void {
    if (this.pgid !== null) {
      this.#warn(`process error: ${err.message}`);
      return;
    }
    this.#spawnError = err;
    this.#fail({ code: 'runner.start_failed', message: `could not start plugin ${this.identity} (${this.command}): ${err.message}` });
    queueMicrotask(() => this.#finish());
  }

  #onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.#exitStatus = { code, signal };
    if (this.pgid !== null) endGroup(this.pgid);
    const timer = setTimeout(() => {
      this.#child.stdout.destroy();
      this.#child.stderr.destroy();
      this.#finish();
    }, STDIO_CLOSE_WAIT_MS);
    timer.unref();
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#stderr.flush();
    if (this.pgid !== null) untrackGroup(this.pgid);
    this.#child.stdin.destroy();
    if (!this.#failure && !this.#stopReason) {
      const inFlight = [...this.#runs.keys()];
      const during =
        inFlight.length > 0 ? ` while run${inFlight.length === 1 ? '' : 's'} ${inFlight.join(', ')} ${inFlight.length === 1 ? 'was' : 'were'} in flight` : '';
      const tail = this.#stderr.text().trim();
      this.#fail({
        code: 'runner.crashed',
        message: `plugin ${this.identity} ${this.describeExit()}${during}${tail ? `; last stderr lines:\n${tail}` : '; it wrote nothing to stderr'}`,
      });
    }
    this.#rejectAll();
    for (const c of this.#inbound.values()) c.abort();
    this.#resolveExited(this.#failure);
  }

  #fail(failure: ConnectionFailure): void {
    if (this.#failure || this.#stopReason) return;
    this.#failure = failure;
    this.#rejectAll();
  }

  #rejectAll(): void {
    const details: Record<string, unknown> = { plugin: this.identity, stderr_tail: this.#stderr.text() };
    if (this.#exitStatus) {
      details.exit_code = this.#exitStatus.code;
      details.signal = this.#exitStatus.signal;
    }
    const error =
      this.#failure !== null
        ? new LbotError(this.#failure.code, this.#failure.message, { details })
        : new LbotError('cancelled', `plugin ${this.identity} was stopped by the host`);
    for (const p of [...this.#pending.values()]) p.fail(error);
    for (const run of [...this.#runs.values()]) run.settle({ error });
  }
}
