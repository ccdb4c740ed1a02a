// NDJSON codec of LangBot's plugin wire: bytes in → frames out (skipping the non-JSON lines the SDK
// prints, reassembling chunk lines by UTF-8 byte offsets), and a message → the lines that carry it.
// Pure: it owns no stream, so it can sit behind any line splitter.
import {
  ChunkLineSchema,
  LANGBOT_CHUNK_BYTES,
  LANGBOT_HOST_LINE_LIMIT,
  LANGBOT_MAX_FRAGMENTS,
  LANGBOT_MAX_MESSAGE_BYTES,
  LANGBOT_PLUGIN_LINE_LIMIT,
  LangbotRequestSchema,
  LangbotResponseSchema,
  type LangbotFrame,
} from './frames.js';

export type DecoderLimits = { lineBytes: number; messageBytes: number; fragments: number };

export type DecodeOutput = {
  frames: LangbotFrame[];
  /** Excerpts of skipped lines (print output, JSON that is neither request nor response). */
  skipped: string[];
  /** Set once the channel is broken (oversized line, bad chunk sequence, malformed frame); nothing is decoded after it. */
  violation: string | null;
};

const NEWLINE = 0x0a;
const EXCERPT_CHARS = 80;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function excerpt(text: string): string {
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Assembly = { total: number; received: number; parts: string[] };

/** Turns the plugin's stdout bytes into frames; one instance per connection. */
export class LangbotDecoder {
  readonly #limits: DecoderLimits;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #assembly: Assembly | null = null;
  #violation: string | null = null;

  constructor(limits: Partial<DecoderLimits> = {}) {
    this.#limits = {
      lineBytes: limits.lineBytes ?? LANGBOT_HOST_LINE_LIMIT,
      messageBytes: limits.messageBytes ?? LANGBOT_MAX_MESSAGE_BYTES,
      fragments: limits.fragments ?? LANGBOT_MAX_FRAGMENTS,
    };
  }

  /** Feeds bytes; a line is only decoded once its newline arrived, so a split UTF-8 sequence is whole again. */
  push(chunk: Uint8Array): DecodeOutput {
    const out: DecodeOutput = { frames: [], skipped: [], violation: null };
    if (this.#violation) return out;
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (;;) {
      const nl = buf.indexOf(NEWLINE);
      if (nl < 0) {
        // The cap is checked before buffering more, so a newline-less flood cannot grow memory.
        if (this.#pendingBytes + buf.length > this.#limits.lineBytes) return this.#fail(out, this.#tooLong());
        if (buf.length > 0) {
          this.#pending.push(Buffer.from(buf));
          this.#pendingBytes += buf.length;
        }
        return out;
      }
      if (this.#pendingBytes + nl > this.#limits.lineBytes) return this.#fail(out, this.#tooLong());
      const line = this.#pending.length > 0 ? Buffer.concat([...this.#pending, buf.subarray(0, nl)]) : buf.subarray(0, nl);
      this.#pending = [];
      this.#pendingBytes = 0;
      buf = buf.subarray(nl + 1);
      const why = this.#line(line, out);
      if (why) return this.#fail(out, why);
    }
  }

  #tooLong(): string {
    return `a stdout line is longer than ${this.#limits.lineBytes} bytes (messages over ${LANGBOT_CHUNK_BYTES} bytes must be sent as chunk lines)`;
  }

  #fail(out: DecodeOutput, violation: string): DecodeOutput {
    this.#violation = violation;
    this.#pending = [];
    this.#assembly = null;
    out.violation = violation;
    return out;
  }

  /** Handles one complete line; returns a violation, or null. */
  #line(bytes: Buffer, out: DecodeOutput): string | null {
    let text: string;
    try {
      text = utf8.decode(bytes).trim();
    } catch {
      out.skipped.push('(a line that is not UTF-8)');
      return null;
    }
    if (text === '') return null;
    if (!text.startsWith('{') || !text.endsWith('}')) {
      out.skipped.push(excerpt(text));
      return null;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      out.skipped.push(excerpt(text));
      return null;
    }
    if (!isObject(value)) return null;
    if (typeof value.type === 'string' && value.type.startsWith('chunk_')) return this.#chunk(value, out);
    return this.#message(value, out, excerpt(text));
  }

  #chunk(value: Record<string, unknown>, out: DecodeOutput): string | null {
    const parsed = ChunkLineSchema.safeParse(value);
    if (!parsed.success) return `a malformed ${String(value.type)} line`;
    const line = parsed.data;
    const asm = this.#assembly;
    switch (line.type) {
      case 'chunk_start':
        if (asm) return 'chunk_start arrived while another chunked message was still open';
        if (line.total_size > this.#limits.messageBytes)
          return `a chunked message of ${line.total_size} bytes exceeds the ${this.#limits.messageBytes}-byte cap`;
        this.#assembly = { total: line.total_size, received: 0, parts: [] };
        return null;
      case 'chunk_data': {
        if (!asm) return 'chunk_data arrived without chunk_start';
        if (line.offset !== asm.received) return `chunk_data at byte offset ${line.offset}, expected ${asm.received}`;
        asm.received += Buffer.byteLength(line.data, 'utf8');
        asm.parts.push(line.data);
        if (asm.received > asm.total) return `chunk_data runs past total_size ${asm.total}`;
        if (asm.parts.length > this.#limits.fragments) return `a chunked message has more than ${this.#limits.fragments} fragments`;
        return null;
      }
      case 'chunk_end': {
        if (!asm) return 'chunk_end arrived without chunk_start';
        this.#assembly = null;
        if (asm.received !== asm.total) return `a chunked message ended after ${asm.received} of ${asm.total} bytes`;
        const text = asm.parts.join('');
        let value2: unknown;
        try {
          value2 = JSON.parse(text);
        } catch {
          return 'a chunked message is not valid JSON';
        }
        if (!isObject(value2)) return 'a chunked message is not a JSON object';
        return this.#message(value2, out, excerpt(text), true);
      }
    }
  }

  /** A frame with `code` is a response, one with `action` a request; other JSON is skipped like the SDK does. */
  #message(value: Record<string, unknown>, out: DecodeOutput, shown: string, chunked = false): string | null {
    if ('code' in value) {
      const parsed = LangbotResponseSchema.safeParse(value);
      if (!parsed.success) return `a malformed response frame: ${shown}`;
      out.frames.push({ kind: 'response', response: parsed.data });
      return null;
    }
    if ('action' in value) {
      const parsed = LangbotRequestSchema.safeParse(value);
      if (!parsed.success) return `a malformed request frame: ${shown}`;
      out.frames.push({ kind: 'request', request: parsed.data });
      return null;
    }
    if (chunked) return 'a chunked message is neither a request nor a response';
    out.skipped.push(shown);
    return null;
  }
}

export class LangbotEncodeError extends Error {
  override name = 'LangbotEncodeError';
}

function utf8Length(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** Bytes one code point takes inside a JSON string literal as JSON.stringify writes it. */
function escapedLength(cp: number): number {
  if (cp === 0x22 || cp === 0x5c) return 2;
  if (cp < 0x20) return cp === 0x08 || cp === 0x09 || cp === 0x0a || cp === 0x0c || cp === 0x0d ? 2 : 6;
  return utf8Length(cp);
}

/** Room a chunk_data line needs besides its escaped data: keys, quotes, the offset digits, the newline. */
const CHUNK_LINE_OVERHEAD = 64;

/**
 * The lines (each ending in `\n`) that carry `message`: one line up to 16 KiB of JSON text, else
 * chunk_start, chunk_data pieces and chunk_end. Pieces split at code point boundaries, each at most
 * `chunkBytes` UTF-8 bytes and each line at most `lineLimit` bytes once escaped.
 */
export function encodeLangbotMessage(
  message: Record<string, unknown>,
  opts: { chunkBytes?: number; lineLimit?: number; maxMessageBytes?: number } = {},
): string[] {
  const chunkBytes = opts.chunkBytes ?? LANGBOT_CHUNK_BYTES;
  const lineLimit = opts.lineLimit ?? LANGBOT_PLUGIN_LINE_LIMIT;
  const maxBytes = opts.maxMessageBytes ?? LANGBOT_MAX_MESSAGE_BYTES;
  const text = JSON.stringify(message);
  const total = Buffer.byteLength(text, 'utf8');
  if (total > maxBytes) throw new LangbotEncodeError(`the message is ${total} bytes; LangBot plugins accept at most ${maxBytes}`);
  if (total <= chunkBytes) return [`${text}\n`];
  const budget = lineLimit - CHUNK_LINE_OVERHEAD;
  const lines = [`${JSON.stringify({ type: 'chunk_start', total_size: total })}\n`];
  let offset = 0;
  let start = 0;
  let bytes = 0;
  let escaped = 0;
  let i = 0;
  const flush = (end: number) => {
    lines.push(`${JSON.stringify({ type: 'chunk_data', data: text.slice(start, end), offset })}\n`);
    offset += bytes;
    start = end;
    bytes = 0;
    escaped = 0;
  };
  while (i < text.length) {
    const cp = text.codePointAt(i) ?? 0;
    const units = cp > 0xffff ? 2 : 1;
    const b = utf8Length(cp);
    const e = escapedLength(cp);
    if (bytes + b > chunkBytes || escaped + e > budget) flush(i);
    bytes += b;
    escaped += e;
    i += units;
  }
  if (start < text.length) flush(text.length);
  lines.push(`${JSON.stringify({ type: 'chunk_end' })}\n`);
  if (lines.length - 2 > LANGBOT_MAX_FRAGMENTS)
    throw new LangbotEncodeError(`the message needs ${lines.length - 2} fragments; the cap is ${LANGBOT_MAX_FRAGMENTS}`);
  return lines;
}
