// The one reporter: results to stdout (text, or JSON of a named shape with --json), diagnostics to stderr.
// Every `--json` result goes through a shape of core/shapes (docs/cli.md, "JSON output").
import type { z } from 'zod';
import { LbotError, toLbotError } from '../../core/errors.js';
import type { Shape } from '../../core/shapes/shape.js';
import { exitCodeFor } from './exit-codes.js';

/** `jsonl`: list commands print one item a line instead of one array (implies `json`). */
export type OutputOptions = { json: boolean; jsonl?: boolean; verbose: boolean; debug: boolean; checkShapes?: boolean };

type Render<T> = (value: T) => string | null;

export type Output = {
  readonly json: boolean;
  readonly verbose: boolean;
  /** One object of an `item` shape: JSON with --json, else the text `render` returns (nothing if it returns null). */
  item<S extends z.ZodType, T extends z.input<S>>(shape: Shape<S>, value: T, render?: Render<T>): void;
  /** The items of a list: one JSON array with --json (one item a line with --jsonl), else what `render` returns. */
  list<S extends z.ZodType, T extends z.input<S>>(shape: Shape<S>, items: readonly T[], render: Render<readonly T[]>): void;
  /** One NDJSON line of a `stream` shape on stdout (only with --json). */
  stream<S extends z.ZodType>(shape: Shape<S>, value: z.input<S>): void;
  /** One NDJSON line of a shape on stderr (only with --json): progress that must not mix with the result. */
  progress<S extends z.ZodType>(shape: Shape<S>, value: z.input<S>): void;
  /** Prints plain text to stdout (only in text mode). */
  text(line: string): void;
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

/**
 * With `checkShapes` (env LBOT_CHECK_SHAPES=1, for tests and CI) a value that does not match its shape fails
 * the command as an internal error instead of reaching stdout.
 */
function checked(opts: OutputOptions, shape: Shape, value: unknown): unknown {
  if (!opts.checkShapes) return value;
  const parsed = shape.schema.safeParse(value);
  if (parsed.success) return value;
  const issue = parsed.error.issues[0];
  throw new LbotError(
    'internal',
    `--json output does not match shape ${shape.name}: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'}`,
  );
}

export function createOutput(opts: OutputOptions, streams = { out: process.stdout, err: process.stderr }): Output {
  const write = (stream: NodeJS.WritableStream, s: string) => stream.write(s.endsWith('\n') ? s : `${s}\n`);
  const json = opts.json || opts.jsonl === true;
  const printText = (text: string | null) => {
    if (text !== null && text !== '') write(streams.out, text);
  };
  return {
    json,
    verbose: opts.verbose,
    item(shape, value, render) {
      if (json) return void write(streams.out, JSON.stringify(checked(opts, shape, value)));
      printText(render ? render(value) : JSON.stringify(value, null, 2));
    },
    list(shape, items, render) {
      if (!json) return printText(render(items));
      for (const item of items) checked(opts, shape, item);
      if (opts.jsonl) for (const item of items) write(streams.out, JSON.stringify(item));
      else write(streams.out, JSON.stringify(items));
    },
    stream(shape, value) {
      if (json) write(streams.out, JSON.stringify(checked(opts, shape, value)));
    },
    progress(shape, value) {
      if (json) write(streams.err, JSON.stringify(checked(opts, shape, value)));
    },
    text(line) {
      if (!json) write(streams.out, line);
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
      if (json) write(streams.out, JSON.stringify({ ok: false, error: e.toJSON() }));
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
