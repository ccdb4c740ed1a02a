// The operator log of `lbot serve`: one pino logger (fastify's own logger type) writing JSON lines, or the
// same records rendered one per line for a terminal. Every record has `event` naming what happened.
import { pino, type DestinationStream, type Level, type Logger } from 'pino';

export type LogFormat = 'pretty' | 'json';
export type ServeLogger = Logger;

export type ServeLoggerOptions = {
  format: LogFormat;
  /** `warn` under --quiet, `debug` under --verbose, else `info`. */
  level: Extract<Level, 'debug' | 'info' | 'warn'>;
  /** Where the lines go (default stderr: stdout carries the `serve.ready` line). */
  stream?: NodeJS.WritableStream;
  /** Colours in the pretty format (a TTY without NO_COLOR). */
  color?: boolean;
};

/** pretty on a terminal, json for a file, a pipe or a log collector. */
export function defaultLogFormat(stream: { isTTY?: boolean }): LogFormat {
  return stream.isTTY === true ? 'pretty' : 'json';
}

export function createServeLogger(opts: ServeLoggerOptions): ServeLogger {
  const out = opts.stream ?? process.stderr;
  const destination: DestinationStream = opts.format === 'json' ? { write: (line) => void out.write(line) } : prettyStream(out, opts.color === true);
  return pino(
    {
      level: opts.level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Fastify's request serializer would log headers; the request line logs method, path and status only.
      serializers: { err: pino.stdSerializers.err },
    },
    destination,
  );
}

/**
 * The log of a long-running server command (`serve`, `box serve`) on stderr: --log-format, else by terminal;
 * `warn` under --quiet, `debug` under --verbose/--debug; colours on a TTY without NO_COLOR.
 */
export function createCommandLogger(flags: { logFormat?: LogFormat | undefined; quiet?: boolean | undefined; verbose: boolean }): ServeLogger {
  const format = flags.logFormat ?? defaultLogFormat(process.stderr);
  return createServeLogger({
    format,
    level: flags.quiet ? 'warn' : flags.verbose ? 'debug' : 'info',
    color: format === 'pretty' && process.stderr.isTTY === true && !process.env.NO_COLOR,
  });
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const LEVEL_COLORS: Record<number, string> = { 20: '\x1b[90m', 30: '\x1b[36m', 40: '\x1b[33m', 50: '\x1b[31m', 60: '\x1b[41m' };
const OMITTED = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'event']);

/** A value as `key=value`: bare when it is a plain word, JSON otherwise (strings with spaces are quoted). */
function field(key: string, value: unknown): string {
  const text = typeof value === 'string' && /^[\w.:/@+-]+$/.test(value) ? value : JSON.stringify(value);
  return `${key}=${text}`;
}

/** Renders one JSON log record as `HH:MM:SS LEVEL event msg key=value…`. */
export function prettyLine(record: Record<string, unknown>, color: boolean): string {
  const level = typeof record.level === 'number' ? record.level : 30;
  const time = typeof record.time === 'string' ? new Date(record.time) : new Date();
  const clock = Number.isNaN(time.getTime()) ? '' : time.toTimeString().slice(0, 8);
  const name = (LEVEL_NAMES[level] ?? String(level)).padEnd(5);
  const paint = (code: string | undefined, text: string) => (color && code ? `${code}${text}\x1b[0m` : text);
  const parts = [paint('\x1b[90m', clock), paint(LEVEL_COLORS[level], name)];
  if (typeof record.event === 'string') parts.push(paint('\x1b[1m', record.event));
  if (typeof record.msg === 'string' && record.msg !== '') parts.push(record.msg);
  for (const [key, value] of Object.entries(record)) if (!OMITTED.has(key) && value !== undefined) parts.push(field(key, value));
  return parts.filter((p) => p !== '').join(' ');
}

function prettyStream(out: NodeJS.WritableStream, color: boolean): DestinationStream {
  return {
    write(line: string) {
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        out.write(line);
        return;
      }
      const text =
        typeof record === 'object' && record !== null && !Array.isArray(record)
          ? prettyLine(Object.fromEntries(Object.entries(record)), color)
          : line.trimEnd();
      out.write(`${text}\n`);
    },
  };
}
