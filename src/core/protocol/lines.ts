// Newline framing, the one splitter and writer of every line channel lbot speaks (the plugin
// protocol at both ends, stdio MCP servers): a hard byte cap checked before a chunk is kept, and a
// writer that honours backpressure. Pure code over buffers and a stream it is handed; it lives in
// core/protocol because the SDK, which may import nothing else, frames the same channel.
import type { Writable } from 'node:stream';
import { MAX_LINE_BYTES } from './wire.js';

const NEWLINE = 0x0a;
const CR = 0x0d;
/** How many bytes of an oversized line the overflow hands on (for an excerpt in the error). */
export const OVERFLOW_HEAD_BYTES = 80;

export type LineSplitterOptions = {
  /** A line longer than this (without its newline) is refused; default MAX_LINE_BYTES (8 MiB). */
  maxLineBytes?: number;
  /** One complete line, without `\n` and one trailing `\r`; a copy the caller may keep. */
  onLine(line: Buffer): void;
  /** A line exceeded the cap: its first OVERFLOW_HEAD_BYTES bytes. The splitter stops until reset(). */
  onOverflow(head: Buffer): void;
};

function headOf(chunks: readonly Buffer[]): Buffer {
  const taken: Buffer[] = [];
  let size = 0;
  for (const c of chunks) {
    if (size >= OVERFLOW_HEAD_BYTES) break;
    const part = c.subarray(0, OVERFLOW_HEAD_BYTES - size);
    taken.push(part);
    size += part.length;
  }
  return Buffer.concat(taken);
}

/**
 * Splits a byte stream on `\n`. The cap is checked before a chunk is kept, so a line without a
 * newline never grows the buffer past `maxLineBytes` (acceptance AC-199).
 */
export class LineSplitter {
  readonly maxLineBytes: number;
  readonly #onLine: (line: Buffer) => void;
  readonly #onOverflow: (head: Buffer) => void;
  #chunks: Buffer[] = [];
  #size = 0;
  #stopped = false;

  constructor(opts: LineSplitterOptions) {
    this.maxLineBytes = opts.maxLineBytes ?? MAX_LINE_BYTES;
    this.#onLine = opts.onLine;
    this.#onOverflow = opts.onOverflow;
  }

  /** Feeds one chunk; calls onLine for each line it completes, onOverflow once a line exceeds the cap. */
  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length && !this.#stopped) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      if (this.#size + (end - start) > this.maxLineBytes) {
        const head = headOf([...this.#chunks, chunk.subarray(start, start + OVERFLOW_HEAD_BYTES)]);
        this.stop();
        this.#onOverflow(head);
        return;
      }
      if (nl === -1) {
        // Copy: the stream may reuse its chunk buffers.
        this.#chunks.push(Buffer.from(chunk.subarray(start)));
        this.#size += chunk.length - start;
        return;
      }
      const piece = chunk.subarray(start, nl);
      let line = this.#chunks.length === 0 ? Buffer.from(piece) : Buffer.concat([...this.#chunks, piece]);
      if (line.at(-1) === CR) line = line.subarray(0, -1);
      this.#chunks = [];
      this.#size = 0;
      start = nl + 1;
      this.#onLine(line);
    }
  }

  /** At end of input: an unfinished last line still counts as a line (as readline has it). */
  finish(): void {
    if (this.#stopped || this.#size === 0) return;
    let line = Buffer.concat(this.#chunks);
    if (line.at(-1) === CR) line = line.subarray(0, -1);
    this.#chunks = [];
    this.#size = 0;
    this.#onLine(line);
  }

  /** Drops what is buffered and ignores every later chunk (the channel is given up). */
  stop(): void {
    this.#stopped = true;
    this.#chunks = [];
    this.#size = 0;
  }

  /** Starts clean: nothing buffered, splitting again. */
  reset(): void {
    this.stop();
    this.#stopped = false;
  }

  /** Bytes of an unfinished line still held (for tests and diagnostics). */
  get pendingBytes(): number {
    return this.#size;
  }
}

/**
 * When a LineWriter hands its lines to the stream: at once (the default), or gathered into one write so the
 * reader wakes once for them all. `job`: the lines of the running callback and its promise jobs, written
 * when they are done (process.nextTick). `loop`: the lines of every callback the event loop runs before its
 * check phase (setImmediate); a host that starts many runs at once sends them to the runner together.
 */
export type Coalesce = 'job' | 'loop';

/**
 * Writes one JSON value per line; queues while the pipe is full and resumes on `drain`. The
 * stream's write is taken at construction, so code that replaces it later (a runner patching
 * process.stdout) cannot reach the channel.
 */
export class LineWriter {
  readonly #stream: Writable;
  readonly #write: (chunk: string, cb?: (err?: Error | null) => void) => boolean;
  readonly #coalesce: Coalesce | undefined;
  #queue: string[] = [];
  /** Lines gathered and not yet handed to the stream (coalesce only). */
  #turn = '';
  #blocked = false;
  #closed = false;
  #flushed: (() => void)[] = [];

  constructor(stream: Writable, opts: { coalesce?: Coalesce | undefined } = {}) {
    this.#stream = stream;
    this.#write = stream.write.bind(stream);
    this.#coalesce = opts.coalesce;
    stream.on('drain', () => this.#drain());
    stream.on('error', () => {
      this.#closed = true;
      this.#queue = [];
      for (const resolve of this.#flushed.splice(0)) resolve();
    });
  }

  /** Serializes and sends `message`; silently dropped once the stream is closed. */
  write(message: unknown): void {
    if (this.#gone()) return;
    const line = `${JSON.stringify(message)}\n`;
    if (this.#coalesce === undefined) return this.#send(line);
    // `job`: a tick queued from a promise job runs once the job queue is empty, after every line of this callback.
    if (this.#turn === '') (this.#coalesce === 'job' ? process.nextTick : setImmediate)(() => this.#endTurn());
    this.#turn += line;
  }

  #endTurn(): void {
    const lines = this.#turn;
    this.#turn = '';
    if (lines !== '' && !this.#gone()) this.#send(lines);
  }

  #send(text: string): void {
    if (this.#blocked) {
      this.#queue.push(text);
      return;
    }
    if (!this.#write(text)) this.#blocked = true;
  }

  /** Resolves once every queued line has been handed to the stream and written (or the stream is gone). */
  flush(): Promise<void> {
    this.#endTurn();
    if (this.#gone()) return Promise.resolve();
    return new Promise((resolve) => {
      this.#flushed.push(resolve);
      if (!this.#blocked) this.#settleFlushes();
    });
  }

  /** Ends the stream after the queued lines. */
  end(): void {
    if (this.#closed) return;
    this.#endTurn();
    this.#closed = true;
    const rest = this.#queue.join('');
    this.#queue = [];
    if (!this.#stream.destroyed && !this.#stream.writableEnded) this.#stream.end(rest);
    for (const resolve of this.#flushed.splice(0)) resolve();
  }

  #gone(): boolean {
    return this.#closed || this.#stream.destroyed || this.#stream.writableEnded;
  }

  #drain(): void {
    this.#blocked = false;
    while (this.#queue.length > 0 && !this.#blocked) {
      const line = this.#queue.shift();
      if (line !== undefined && !this.#write(line)) this.#blocked = true;
    }
    if (!this.#blocked) this.#settleFlushes();
  }

  #settleFlushes(): void {
    const waiting = this.#flushed.splice(0);
    if (waiting.length === 0) return;
    this.#write('', () => {
      for (const resolve of waiting) resolve();
    });
  }
}
