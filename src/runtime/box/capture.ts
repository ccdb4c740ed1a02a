// Bounded capture of a process stream: the first and last bytes and a code-point count, never the middle.
import { StringDecoder } from 'node:string_decoder';
import { truncateParts, truncateText } from '../../core/box/truncate.js';

/** Counts UTF-8 code points: every byte that is not a continuation byte (10xxxxxx) starts one. */
function countCodePoints(buf: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < buf.length; i++) if (((buf[i] ?? 0) & 0xc0) !== 0x80) n++;
  return n;
}

/** Index of the first byte in `buf` that starts a code point (skips leading continuation bytes). */
function firstBoundary(buf: Buffer): number {
  let i = 0;
  while (i < buf.length && i < 4 && ((buf[i] ?? 0) & 0xc0) === 0x80) i++;
  return i;
}

export class HeadTailCapture {
  readonly #cap: number;
  #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #total = 0;
  #codePoints = 0;

  /** Keeps up to `capBytes` from the start and up to `capBytes` from the end of the stream. */
  constructor(capBytes: number) {
    this.#cap = capBytes;
  }

  get totalBytes(): number {
    return this.#total;
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    this.#codePoints += countCodePoints(chunk);
    let rest = chunk;
    if (this.#headBytes < this.#cap) {
      const take = Math.min(this.#cap - this.#headBytes, rest.length);
      this.#head.push(Buffer.from(rest.subarray(0, take)));
      this.#headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    this.#tail.push(Buffer.from(rest.length > this.#cap ? rest.subarray(rest.length - this.#cap) : rest));
    this.#tailBytes += Math.min(rest.length, this.#cap);
    while (this.#tail.length > 1 && this.#tailBytes - (this.#tail[0]?.length ?? 0) >= this.#cap) {
      this.#tailBytes -= this.#tail.shift()?.length ?? 0;
    }
  }

  /** Whether bytes between the kept head and tail were dropped. */
  get clipped(): boolean {
    return this.#total > this.#headBytes + this.#tailBytes;
  }

  /** The whole text when nothing was dropped (decoded lossily), else head + tail joined. */
  rawText(): string {
    const dec = new StringDecoder('utf8');
    return dec.write(Buffer.concat([...this.#head, ...this.#tail])) + dec.end();
  }

  /** The text truncated to `limit` code points (box.md §7.4), exact even when the middle was dropped. */
  text(limit: number): { text: string; truncated: boolean } {
    if (!this.clipped) return truncateText(this.rawText(), limit);
    const headDec = new StringDecoder('utf8');
    // A code point cut at the end of the head is dropped rather than decoded as U+FFFD.
    const headText = headDec.write(Buffer.concat(this.#head));
    const tailBuf = Buffer.concat(this.#tail);
    const tailBytes = tailBuf.length > this.#cap ? tailBuf.subarray(tailBuf.length - this.#cap) : tailBuf;
    const tailText = tailBytes.subarray(firstBoundary(tailBytes)).toString('utf8');
    return { text: truncateParts(Array.from(headText), Array.from(tailText), this.#codePoints, limit), truncated: true };
  }
}
