// The one reporter: results to stdout (text or NDJSON with --json), diagnostics to stderr.
import { LbotError, toLbotError } from '../../core/errors.js';
import { exitCodeFor } from './exit-codes.js';

export type OutputOptions = { json: boolean; verbose: boolean; debug: boolean };

export type Output = {
  readonly json: boolean;
  readonly verbose: boolean;
  /** Prints one result: JSON line with --json, else the text `render` returns (nothing if it returns null). */
  result<T>(value: T, render?: (value: T) => string | null): void;
  /** Prints plain text to stdout (only in text mode). */
  text(line: string): void;
  /** Prints one NDJSON line to stdout (only in --json mode). */
  line(value: unknown): void;
  warn(message: string): void;
  /** A diagnostic line on stderr in every mode (progress, per-run errors that are not the command's). */
  notice(message: string): void;
  /** Like notice, only with --verbose or --debug. */
  info(message: string): void;
  /** Reports an error and returns the exit code it maps to (or `exitCode` when given). */
  error(err: unknown, exitCode?: number): number;
  /** Writes raw bytes to stdout as they are; resolves once the stream has taken all of them. */
  bytes(data: Uint8Array): Promise<void>;
  /** Resolves once everything written to stdout and stderr so far has been handed to the OS (awaited before exit). */
  flush(): Promise<void>;
};

/**
 * Resolves when `stream` has accepted `chunk` and everything queued before it. All stdout goes through the
 * stream (never fs.writeSync on fd 1: a pipe is non-blocking once the stream owns it, so a direct write can
 * come back short or fail with EAGAIN when the reader is slow).
 */
function writeAll(stream: NodeJS.WritableStream, chunk: Uint8Array | string): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(chunk, (err?: Error | null) => (err && !isClosedPipe(err) ? reject(err) : resolve()));
  });
}

/** True for the error of writing to a pipe whose reader has gone (`lbot … | head`): the output just ends there. */
export function isClosedPipe(err: unknown): boolean {
  return err instanceof Error && 'code' in err && (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED');
}

export function createOutput(opts: OutputOptions, streams = { out: process.stdout, err: process.stderr }): Output {
  const write = (stream: NodeJS.WritableStream, s: string) => stream.write(s.endsWith('\n') ? s : `${s}\n`);
  return {
    json: opts.json,
    verbose: opts.verbose,
    result(value, render) {
      if (opts.json) {
        write(streams.out, JSON.stringify(value));
        return;
      }
      const text = render ? render(value) : typeof value === 'string' ? value : JSON.stringify(value, null, 2);
      if (text !== null && text !== '') write(streams.out, text);
    },
    text(line) {
      if (!opts.json) write(streams.out, line);
    },
    line(value) {
      if (opts.json) write(streams.out, JSON.stringify(value));
    },
    warn(message) {
      write(streams.err, `lbot: warning: ${message}`);
    },
    notice(message) {
      write(streams.err, `lbot: ${message}`);
    },
    info(message) {
      if (opts.verbose || opts.debug) write(streams.err, `lbot: ${message}`);
    },
    error(err, exitCode) {
      const e = toLbotError(err);
      write(streams.err, `lbot: error[${e.code}]: ${e.message}`);
      if (e.hint) write(streams.err, `  hint: ${e.hint}`);
      if (opts.debug && e.code === 'internal' && e.cause instanceof Error && e.cause.stack) write(streams.err, e.cause.stack);
      if (opts.json) write(streams.out, JSON.stringify({ ok: false, error: e.toJSON() }));
      return exitCode ?? exitCodeFor(e.code);
    },
    bytes(data) {
      return writeAll(streams.out, data);
    },
    async flush() {
      // Nothing to report if a stream failed: the bytes have nowhere to go.
      await Promise.all([writeAll(streams.out, '').catch(() => undefined), writeAll(streams.err, '').catch(() => undefined)]);
    },
  };
}

export { LbotError };
