// The process half of a plugin connection, shared by both wires (lbot JSON-RPC and LangBot's): the
// child's event wiring, process-group tracking, stderr tail, exit status, spawn error, the single
// failure, crash reporting and the stop escalation. A connection composes one and supplies the wire.
import { LbotError } from '../../core/errors.js';
import type { ConnectionFailure } from '../../core/host/ports.js';
import { endGroup, signalGroup, trackGroup, untrackGroup } from '../process/group.js';
import { stopEscalating } from '../process/stop.js';
import { StderrTail } from './stderr-tail.js';
import type { PluginProcess } from './spawn.js';

/** After the leader exits, how long to wait for its stdio to close before giving up on it. */
const STDIO_CLOSE_WAIT_MS = 2000;

/** A protocol warning that fails nothing (stray results, unexpected messages). */
export type PluginWarning = { identity: string; message: string; run_id?: string };

export type ExitStatus = { code: number | null; signal: NodeJS.Signals | null };

export type PluginProcessOptions = {
  identity: string;
  child: PluginProcess;
  /** Printable command line, for error messages. */
  command: string;
  onWarning?: (warning: PluginWarning) => void;
  onStderr?: (line: string) => void;
  /** Each grace period of stop(): after ending stdin and after SIGTERM; default 2000 ms. */
  graceMs?: number;
  /** Why the sandbox stopped the process (a limit), read once it exited. */
  exitNote?: () => string | null;
  /** Raw stdout bytes, for the wire's reader. */
  onStdout: (chunk: Buffer) => void;
  /** Runs in flight, named in a crash message. */
  inFlight: () => readonly string[];
  /** Fails everything the wire has in flight: 'fail' when the connection failed, 'end' once the process is gone. */
  onEnd: (error: LbotError, how: 'fail' | 'end') => void;
};

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export class PluginProcessLifecycle {
  readonly identity: string;
  readonly command: string;
  readonly pgid: number | null;
  readonly exited: Promise<ConnectionFailure | null>;
  readonly child: PluginProcess;

  readonly #onWarning: (warning: PluginWarning) => void;
  readonly #graceMs: number;
  readonly #exitNote: () => string | null;
  readonly #inFlight: () => readonly string[];
  readonly #onEnd: (error: LbotError, how: 'fail' | 'end') => void;
  readonly #stderr: StderrTail;
  #failure: ConnectionFailure | null = null;
  #stopReason: 'close' | 'kill' | null = null;
  #exitStatus: ExitStatus | null = null;
  #spawnError: Error | null = null;
  #finished = false;
  #resolveExited!: (failure: ConnectionFailure | null) => void;

  constructor(opts: PluginProcessOptions) {
    this.identity = opts.identity;
    this.command = opts.command;
    this.child = opts.child;
    this.#onWarning = opts.onWarning ?? (() => undefined);
    this.#graceMs = opts.graceMs ?? 2000;
    this.#exitNote = opts.exitNote ?? (() => null);
    this.#inFlight = opts.inFlight;
    this.#onEnd = opts.onEnd;
    this.pgid = opts.child.pid ?? null;
    this.exited = new Promise((resolve) => (this.#resolveExited = resolve));
    this.#stderr = new StderrTail(opts.onStderr);
    if (this.pgid !== null) trackGroup(this.pgid);

    const child = opts.child;
    child.stdout.on('data', (chunk: Buffer) => opts.onStdout(chunk));
    // Pipe errors surface as the process's exit; without a listener they would crash lbot.
    child.stdout.on('error', () => undefined);
    child.stderr.on('error', () => undefined);
    // Raw bytes: the tail decodes them itself so invalid UTF-8 is kept escaped, not replaced.
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

  get exitStatus(): ExitStatus | null {
    return this.#exitStatus;
  }

  get finished(): boolean {
    return this.#finished;
  }

  stderrTail(): string {
    return this.#stderr.text();
  }

  warn(message: string, run_id?: string): void {
    this.#onWarning(run_id === undefined ? { identity: this.identity, message } : { identity: this.identity, message, run_id });
  }

  get accepting(): boolean {
    return !this.#failure && !this.#stopReason && !this.#finished;
  }

  /** Why no new request may be sent, or null while the connection is usable. */
  endedError(): LbotError | null {
    if (this.#failure) return new LbotError(this.#failure.code, this.#failure.message);
    if (this.#stopReason || this.#finished) return new LbotError('cancelled', `plugin ${this.identity} is stopping; no new requests are accepted`);
    return null;
  }

  /** Records the connection's one failure (ignored once stopping) and fails everything in flight. */
  fail(failure: ConnectionFailure): void {
    if (this.#failure || this.#stopReason) return;
    this.#failure = failure;
    this.#onEnd(this.#endError(), 'fail');
  }

  /** A bad line poisons the whole channel: fail everything in flight and kill the group. */
  corrupt(message: string): void {
    if (this.#failure) return;
    this.fail({ code: 'runner.protocol_error', message });
    this.child.stdout.destroy();
    if (this.pgid !== null) signalGroup(this.pgid, 'SIGKILL');
  }

  isCorrupted(): boolean {
    return this.#failure?.code === 'runner.protocol_error';
  }

  async kill(): Promise<void> {
    this.#stopReason ??= 'kill';
    if (this.pgid !== null) signalGroup(this.pgid, 'SIGKILL');
    await this.exited;
  }

  /** Graceful stop: the wire's goodbye (skipped after a failure), end stdin, grace, SIGTERM, grace, SIGKILL. */
  async stop(goodbye: () => Promise<void>, endInput: () => void): Promise<void> {
    if (this.#finished) return;
    this.#stopReason ??= 'close';
    if (!this.#failure) await goodbye().catch(() => undefined);
    await stopEscalating({
      endInput,
      signal: (sig) => {
        if (this.pgid !== null) signalGroup(this.pgid, sig);
      },
      exited: this.exited,
      graceMs: this.#graceMs,
    });
  }

  /** "exited with status 137; it was killed for exceeding its memory limit…" (the sandbox's limit note). */
  describeExit(): string {
    const status = this.#exitStatus;
    if (!status) return 'stopped';
    const how = status.signal ? `was killed by ${status.signal}` : `exited with status ${status.code ?? 'unknown'}`;
    const note = this.#exitNote();
    return note ? `${how}; ${note}` : how;
  }

  #onSpawnError(err: Error): void {
    if (this.pgid !== null) {
      this.warn(`process error: ${err.message}`);
      return;
    }
    this.#spawnError = err;
    this.fail({ code: 'runner.start_failed', message: `could not start plugin ${this.identity} (${this.command}): ${err.message}` });
    // Without a pid there is no 'exit' event to wait for.
    queueMicrotask(() => this.#finish());
  }

  #onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.#exitStatus = { code, signal };
    // Children the plugin left in its group (or its sandbox) must not outlive it.
    if (this.pgid !== null) endGroup(this.pgid);
    const timer = setTimeout(() => {
      this.child.stdout.destroy();
      this.child.stderr.destroy();
      this.#finish();
    }, STDIO_CLOSE_WAIT_MS);
    timer.unref();
  }

  /** Runs after the process exited and its stdout was fully read. */
  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#stderr.flush();
    if (this.pgid !== null) untrackGroup(this.pgid);
    this.child.stdin.destroy();
    if (!this.#failure && !this.#stopReason) {
      const runs = this.#inFlight();
      const during = runs.length > 0 ? ` while ${plural(runs.length, 'run')} (${runs.join(', ')}) ${runs.length === 1 ? 'was' : 'were'} in flight` : '';
      const tail = this.#stderr.text().trim();
      this.fail({
        code: 'runner.crashed',
        message: `plugin ${this.identity} ${this.describeExit()}${during}${tail ? `; last stderr lines:\n${tail}` : '; it wrote nothing to stderr'}`,
      });
    }
    this.#onEnd(this.#endError(), 'end');
    this.#resolveExited(this.#failure);
  }

  #endError(): LbotError {
    if (this.#failure === null) return new LbotError('cancelled', `plugin ${this.identity} was stopped by the host`);
    const details: Record<string, unknown> = { plugin: this.identity, stderr_tail: this.#stderr.text() };
    if (this.#exitStatus) {
      details.exit_code = this.#exitStatus.code;
      details.signal = this.#exitStatus.signal;
    }
    return new LbotError(this.#failure.code, this.#failure.message, { details });
  }
}
