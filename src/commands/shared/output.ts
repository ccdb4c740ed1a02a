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
  info(message: string): void;
  /** Reports an error and returns the exit code it maps to (or `exitCode` when given). */
  error(err: unknown, exitCode?: number): number;
};

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
  };
}

export { LbotError };
