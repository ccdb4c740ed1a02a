// A bounded ring of a plugin's last stderr lines; stderr is free text and is never parsed.
import { decodeUtf8Escaped, incompleteUtf8Tail } from './framing.js';

export const STDERR_TAIL_LINES = 50;
export const STDERR_TAIL_BYTES = 8 * 1024;
/** A single unterminated stderr line is cut here so a newline-less flood cannot grow memory. */
const MAX_PARTIAL_CHARS = STDERR_TAIL_BYTES;

export class StderrTail {
  #lines: string[] = [];
  #bytes = 0;
  #partial = '';
  /** Bytes of a UTF-8 sequence split across chunks, completed by the next chunk. */
  #pendingBytes: Buffer = Buffer.alloc(0);

  constructor(private readonly onLine?: (line: string) => void) {}

  /**
   * Feeds a chunk of stderr; complete lines enter the ring. Bytes are decoded as UTF-8 with each invalid
   * byte kept as `\\xNN`, so no replacement character reaches a run record.
   */
  push(chunk: string | Buffer): void {
    let text: string;
    if (typeof chunk === 'string') {
      text = chunk;
    } else {
      const bytes = this.#pendingBytes.length === 0 ? chunk : Buffer.concat([this.#pendingBytes, chunk]);
      const keep = incompleteUtf8Tail(bytes);
      this.#pendingBytes = Buffer.from(bytes.subarray(bytes.length - keep));
      text = decodeUtf8Escaped(bytes.subarray(0, bytes.length - keep));
    }
    const pieces = (this.#partial + text).split('\n');
    this.#partial = (pieces.pop() ?? '').slice(-MAX_PARTIAL_CHARS);
    for (const raw of pieces) this.#add(raw.replace(/\r$/, ''));
  }

  /** Moves an unterminated last line into the ring (at process exit). */
  flush(): void {
    if (this.#pendingBytes.length > 0) this.#partial += decodeUtf8Escaped(this.#pendingBytes);
    this.#pendingBytes = Buffer.alloc(0);
    if (this.#partial !== '') this.#add(this.#partial);
    this.#partial = '';
  }

  /** The last lines, oldest first, joined with newlines. */
  text(): string {
    return [...this.#lines, ...(this.#partial ? [this.#partial] : [])].join('\n');
  }

  #add(raw: string): void {
    const line = raw.length > MAX_PARTIAL_CHARS ? `${raw.slice(0, MAX_PARTIAL_CHARS)}…` : raw;
    this.onLine?.(line);
    this.#lines.push(line);
    this.#bytes += Buffer.byteLength(line) + 1;
    while (this.#lines.length > STDERR_TAIL_LINES || (this.#bytes > STDERR_TAIL_BYTES && this.#lines.length > 1)) {
      const dropped = this.#lines.shift() ?? '';
      this.#bytes -= Buffer.byteLength(dropped) + 1;
    }
  }
}
