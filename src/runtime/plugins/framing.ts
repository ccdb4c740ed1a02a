// Line framing of the plugin channel: split stdout into JSON-RPC messages under a hard line cap,
// and write lines to stdin respecting backpressure (architecture.md §4, style B14).
import type { Writable } from 'node:stream';
import { MAX_LINE_BYTES, RpcMessageSchema, type RpcMessage } from '../../core/protocol/index.js';

const NEWLINE = 0x0a;
/** How much of an offending line an error message quotes (acceptance AC-198). */
export const EXCERPT_BYTES = 80;

/** The longest excerpt, in characters after escaping. */
export const EXCERPT_MAX_CHARS = 200;

/**
 * A line that corrupts the channel: why, and the first bytes of it as the body of a JSON string
 * (quotes, backslashes and control characters escaped) where bytes that are not UTF-8 read `\xNN`.
 * It never holds U+FFFD or raw bytes, so it is safe to store and to print.
 */
export type FrameViolation = { reason: string; excerpt: string };

export type Frame = { kind: 'message'; message: RpcMessage } | { kind: 'violation'; violation: FrameViolation };

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Length of the valid UTF-8 sequence starting at `i`, or 0 when the byte there does not start one. */
function utf8SequenceAt(bytes: Uint8Array, i: number): number {
  const b = bytes[i] ?? 0;
  const n = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
  if (n <= 1 || i + n > bytes.length) return n === 1 ? 1 : 0;
  try {
    fatalUtf8.decode(bytes.subarray(i, i + n));
    return n;
  } catch {
    return 0;
  }
}

/** Decodes UTF-8, writing each byte that is not part of a valid sequence as `\\xNN` (never U+FFFD). */
export function decodeUtf8Escaped(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length;) {
    const n = utf8SequenceAt(bytes, i);
    if (n === 0) {
      out += `\\x${(bytes[i] ?? 0).toString(16).padStart(2, '0')}`;
      i += 1;
    } else {
      out += Buffer.from(bytes.subarray(i, i + n)).toString('utf8');
      i += n;
    }
  }
  return out;
}

/** How many bytes at the end of `bytes` start a UTF-8 sequence that the next chunk may complete. */
export function incompleteUtf8Tail(bytes: Uint8Array): number {
  for (let i = Math.max(0, bytes.length - 3); i < bytes.length; i++) {
    const b = bytes[i] ?? 0;
    const n = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (n === 0 || i + n <= bytes.length) continue;
    let continuation = true;
    for (let j = i + 1; j < bytes.length; j++) if (((bytes[j] ?? 0) & 0xc0) !== 0x80) continuation = false;
    if (continuation) return bytes.length - i;
  }
  return 0;
}

/** The escaped excerpt of the first EXCERPT_BYTES bytes of a line (at most EXCERPT_MAX_CHARS characters). */
export function excerptOf(bytes: Uint8Array): string {
  const head = bytes.subarray(0, EXCERPT_BYTES);
  let out = '';
  for (let i = 0; i < head.length;) {
    const n = utf8SequenceAt(head, i);
    const piece =
      n === 0 ? `\\x${(head[i] ?? 0).toString(16).padStart(2, '0')}` : JSON.stringify(Buffer.from(head.subarray(i, i + n)).toString('utf8')).slice(1, -1);
    if (out.length + piece.length > EXCERPT_MAX_CHARS) break;
    out += piece;
    i += n === 0 ? 1 : n;
  }
  return out;
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    fatalUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function headBytes(chunks: Buffer[]): Buffer {
  const taken: Buffer[] = [];
  let size = 0;
  for (const c of chunks) {
    if (size >= EXCERPT_BYTES) break;
    const part = c.subarray(0, EXCERPT_BYTES - size);
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
  #chunks: Buffer[] = [];
  #size = 0;
  #overflowed = false;

  constructor(readonly maxLineBytes: number = MAX_LINE_BYTES) {}

  /** Feeds one chunk; returns the complete lines, or a violation once a line exceeds the cap. */
  push(chunk: Buffer): { lines: Buffer[]; violation: FrameViolation | null } {
    const lines: Buffer[] = [];
    if (this.#overflowed) return { lines, violation: null };
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      if (this.#size + (end - start) > this.maxLineBytes) {
        this.#overflowed = true;
        const head = headBytes([...this.#chunks, chunk.subarray(start, start + EXCERPT_BYTES)]);
        this.#chunks = [];
        this.#size = 0;
        return {
          lines,
          violation: { reason: `a line exceeded the ${this.maxLineBytes}-byte limit of the plugin protocol`, excerpt: excerptOf(head) },
        };
      }
      if (nl === -1) {
        // Copy: the stream may reuse its chunk buffers.
        this.#chunks.push(Buffer.from(chunk.subarray(start)));
        this.#size += chunk.length - start;
        break;
      }
      const piece = chunk.subarray(start, nl);
      lines.push(this.#chunks.length === 0 ? Buffer.from(piece) : Buffer.concat([...this.#chunks, piece]));
      this.#chunks = [];
      this.#size = 0;
      start = nl + 1;
    }
    return { lines, violation: null };
  }

  /** Bytes of an unfinished line still held (for tests and diagnostics). */
  get pendingBytes(): number {
    return this.#size;
  }
}

/** Parses one line as a JSON-RPC 2.0 message; anything else is a violation that quotes the line. */
export function decodeLine(line: Buffer): Frame | null {
  // A line that is not UTF-8 is refused rather than decoded with replacement characters.
  if (!isUtf8(line)) return { kind: 'violation', violation: { reason: 'the plugin wrote a line that is not valid UTF-8', excerpt: excerptOf(line) } };
  const text = line.toString('utf8').replace(/\r$/, '');
  if (text.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'violation', violation: { reason: 'the plugin wrote a line that is not JSON', excerpt: excerptOf(line) } };
  }
  const parsed = RpcMessageSchema.safeParse(value);
  if (!parsed.success) {
    return { kind: 'violation', violation: { reason: 'the plugin wrote a line that is not a JSON-RPC 2.0 message', excerpt: excerptOf(line) } };
  }
  return { kind: 'message', message: parsed.data };
}

/** Writes one JSON object per line; queues while the pipe is full and resumes on `drain`. */
export class LineWriter {
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

  /** Serializes and sends `message`; silently dropped once the stream is closed. */
  write(message: unknown): void {
    if (this.#closed || this.stream.destroyed || this.stream.writableEnded) return;
    const line = `${JSON.stringify(message)}\n`;
    if (this.#blocked) {
      this.#queue.push(line);
      return;
    }
    if (!this.stream.write(line)) this.#blocked = true;
  }

  /** Ends the stream after the queued lines. */
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
