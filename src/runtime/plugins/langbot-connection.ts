// One live LangBot SDK plugin process on stdio (docs/langbot-plugins.md): the register handshake,
// `run_agent` streams, plugin → host actions translated onto lbot's proxy table, cancel through
// `run_get`, and the same stop escalation and crash reporting as lbot's own connection.
import { randomInt } from 'node:crypto';
import { LbotError } from '../../core/errors.js';
import { toApiError } from '../../core/host/api-error.js';
import type { ConnectionFailure, PluginConnection, ProxyCall, ProxyCallHandler } from '../../core/host/ports.js';
import { isRecord } from '../../core/json.js';
import type { JsonObject, RunParams, RunReply } from '../../core/protocol/index.js';
import { forwardedAction, isLocalAction, type LocalAction } from '../../core/protocol/langbot/actions.js';
import { LangbotDecoder, LangbotEncodeError, encodeLangbotMessage } from '../../core/protocol/langbot/codec.js';
import { toLangbotContext } from '../../core/protocol/langbot/context.js';
import { LANGBOT_MAX_ERROR_MESSAGE, type LangbotRequest, type LangbotResponse } from '../../core/protocol/langbot/frames.js';
import { ActionRefusal, streamModelCall, unsupported } from './langbot-actions.js';
import { LineQueue } from './line-queue.js';
import { PluginProcessLifecycle, type PluginWarning } from './plugin-process.js';
import type { PluginProcess } from './spawn.js';

/** The SDK's own cap of in-flight actions per connection; beyond it calls are answered "busy". */
const MAX_INBOUND = 128;
const FINISHED_RUNS_KEPT = 1000;
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

export class LangbotPluginConnection implements PluginConnection {
  readonly identity: string;
  readonly pgid: number | null;
  readonly exited: Promise<ConnectionFailure | null>;

  readonly #process: PluginProcessLifecycle;
  readonly #onApiCall: ProxyCallHandler;
  readonly #shutdownTimeoutMs: number;
  readonly #decoder = new LangbotDecoder();
  readonly #out: LineQueue;
  readonly #pending = new Map<number, Pending>();
  readonly #runs = new Map<string, ActiveRun>();
  readonly #finishedRuns = new Map<string, 'completed' | 'failed' | 'cancelled'>();
  readonly #inbound = new Map<number, AbortController>();
  #seq = randomInt(1, 2 ** 30);
  #registration: Registration | null = null;
  #onRegistration: ((r: Registration) => void) | null = null;
  #closing: Promise<void> | undefined;

  constructor(opts: LangbotConnectionOptions) {
    this.identity = opts.identity;
    this.#onApiCall = opts.onApiCall;
    this.#shutdownTimeoutMs = opts.shutdownTimeoutMs ?? 1000;
    this.#out = new LineQueue(opts.child.stdin);
    this.#process = new PluginProcessLifecycle({
      ...opts,
      onStdout: (chunk) => this.#onStdout(chunk),
      inFlight: () => [...this.#runs.keys()],
      onEnd: (error, how) => this.#rejectAll(error, how),
    });
    this.pgid = this.#process.pgid;
    this.exited = this.#process.exited;
  }

  get command(): string {
    return this.#process.command;
  }
  get failure(): ConnectionFailure | null {
    return this.#process.failure;
  }
  get spawnError(): Error | null {
    return this.#process.spawnError;
  }
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

  /** Resolves with the plugin's `register_plugin` request (it speaks first), or rejects when the process ends. */
  registration(): Promise<Registration> {
    if (this.#registration) return Promise.resolve(this.#registration);
    const ended = this.#process.endedError();
    if (ended) return Promise.reject(ended);
    return new Promise((resolve, reject) => {
      this.#onRegistration = resolve;
      void this.exited.then(() => reject(this.#process.endedError() ?? new LbotError('runner.crashed', `plugin ${this.identity} ended before registering`)));
    });
  }

  /** Answers `register_plugin` (after `initialize_plugin` and `get_plugin_container`, as LangBot's runtime does). */
  acceptRegistration(seq_id: number): void {
    this.#send({ seq_id, code: 0, message: 'success', data: {}, chunk_status: 'end' });
  }

  /** Sends one host → plugin request and resolves with its first answer frame; code ≠ 0 rejects. */
  request(action: string, data: Record<string, unknown>, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<unknown> {
    const ended = this.#process.endedError();
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
    const ended = this.#process.endedError();
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

  kill(): Promise<void> {
    return this.#process.kill();
  }

  describeExit(): string {
    return this.#process.describeExit();
  }

  #shutdown(): Promise<void> {
    // In --prod mode `shutdown` is only acknowledged; the plugin exits on stdin EOF.
    return this.#process.stop(
      async () => {
        if (this.#registration) await this.request('shutdown', {}, { timeoutMs: this.#shutdownTimeoutMs });
      },
      () => this.#out.end(),
    );
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

  #rememberFinished(run_id: string, status: 'completed' | 'failed' | 'cancelled'): void {
    this.#finishedRuns.set(run_id, status);
    if (this.#finishedRuns.size > FINISHED_RUNS_KEPT) {
      const oldest = this.#finishedRuns.keys().next().value;
      if (oldest !== undefined) this.#finishedRuns.delete(oldest);
    }
  }

  #warn(message: string, run_id?: string): void {
    this.#process.warn(message, run_id);
  }

  #onStdout(chunk: Buffer): void {
    if (this.#process.isCorrupted()) return;
    const out = this.#decoder.push(chunk);
    for (const frame of out.frames) {
      if (frame.kind === 'response') this.#onResponse(frame.response);
      else this.#onRequest(frame.request);
    }
    if (out.violation) this.#corrupt(out.violation);
  }

  #corrupt(reason: string): void {
    this.#process.corrupt(`plugin ${this.identity} broke the LangBot wire: ${reason}`);
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

  /** `invoke_llm_stream`: lbot's `models.stream` as deltas on this request's seq_id. */
  #stream(seq_id: number, data: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    const push = (item: JsonObject) => {
      if (!signal.aborted) this.#send({ seq_id, code: 0, message: 'success', data: item, chunk_status: 'continue' });
    };
    return streamModelCall((params, notify) => this.#call('models.stream', params, signal, notify), data, push);
  }

  #rejectAll(error: LbotError, how: 'fail' | 'end'): void {
    for (const p of [...this.#pending.values()]) p.fail(error);
    for (const run of [...this.#runs.values()]) run.settle({ error });
    if (how === 'end') for (const c of this.#inbound.values()) c.abort();
  }
}
