// The plugin channel's frames: each line of stdout (split under the byte cap by core/protocol/lines.ts)
// decoded as a JSON-RPC message, and every line that corrupts the channel turned into a violation that
// quotes it safely (architecture.md §4, style B14).
import { LineSplitter, MAX_LINE_BYTES, OVERFLOW_HEAD_BYTES, parseRpcMessage, type RpcMessage } from '../../core/protocol/index.js';

/** How much of an offending line an error message quotes (acceptance AC-198). */
export const EXCERPT_BYTES = OVERFLOW_HEAD_BYTES;

/** The longest excerpt, in characters after escaping. */
export const EXCERPT_MAX_CHARS = 200;

/**
 * A line that corrupts the channel: why, and the first bytes of it as the body of a JSON string
 * (quotes, backslashes and control characters escaped) where bytes that are not UTF-8 read `\xNN`.
 * It never holds U+FFFD or raw bytes, so it is safe to store and to print.
 */
export type FrameViolation = { reason: string; excerpt: string };

export type Frame = { kind: 'message'; message: RpcMessage } | { kind: 'violation'; violation: FrameViolation };

// ignoreBOM keeps a leading U+FEFF in the text (as Buffer#toString does), so such a line is not JSON, as before.
const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

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

/** The text of `bytes` when they are valid UTF-8, else null (one decode: the hot path of every message). */
function utf8Text(bytes: Uint8Array): string | null {
  try {
    return fatalUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/** The violation of a line longer than the cap, quoting the head the splitter kept. */
export function overflowViolation(maxLineBytes: number, head: Buffer): FrameViolation {
  return { reason: `a line exceeded the ${maxLineBytes}-byte limit of the plugin protocol`, excerpt: excerptOf(head) };
}

/** Parses one line as a JSON-RPC 2.0 message; anything else is a violation that quotes the line. */
export function decodeLine(line: Buffer): Frame | null {
  // A line that is not UTF-8 is refused rather than decoded with replacement characters.
  const decoded = utf8Text(line);
  if (decoded === null) return { kind: 'violation', violation: { reason: 'the plugin wrote a line that is not valid UTF-8', excerpt: excerptOf(line) } };
  const text = decoded.endsWith('\r') ? decoded.slice(0, -1) : decoded;
  if (text.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'violation', violation: { reason: 'the plugin wrote a line that is not JSON', excerpt: excerptOf(line) } };
  }
  const parsed = parseRpcMessage(value);
  if (!parsed.success) {
    return { kind: 'violation', violation: { reason: 'the plugin wrote a line that is not a JSON-RPC 2.0 message', excerpt: excerptOf(line) } };
  }
  return { kind: 'message', message: parsed.data };
}

/** The reader of a plugin's stdout: every line as a frame, an oversized line as a violation (after which it stops). */
export function createFrameReader(onFrame: (frame: Frame) => void, maxLineBytes: number = MAX_LINE_BYTES): LineSplitter {
  return new LineSplitter({
    maxLineBytes,
    onLine: (line) => {
      const frame = decodeLine(line);
      if (frame) onFrame(frame);
    },
    onOverflow: (head) => onFrame({ kind: 'violation', violation: overflowViolation(maxLineBytes, head) }),
  });
}
