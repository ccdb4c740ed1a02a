// Validates and normalizes one result item: size cap, type dispatch, message/chunk schemas (runner-protocol.md §5.3).
import { LbotError } from '../errors.js';
import { MessageChunkSchema, MessageSchema, type Message, type MessageChunk } from '../protocol/context.js';
import {
  MAX_RESULT_BYTES,
  RunFailedDataSchema,
  RunResultSchema,
  TRUNCATED_CONTENT_CHARS,
  TRUNCATION_MARKER,
  isKnownResultType,
  type ResultType,
  type RunResult,
} from '../protocol/results.js';
import { isRecord } from '../json.js';
import { firstIssue } from '../zod-issue.js';

export function protocolError(message: string, details: Record<string, unknown> = {}): LbotError {
  return new LbotError('runner.protocol_error', message, { details });
}

/** Plain text of a message or chunk: the string content, or its text elements joined by a space. */
export function messageText(m: Pick<Message, 'content'>): string | null {
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) {
    const texts = m.content.filter((c) => c.type === 'text' && typeof c.text === 'string').map((c) => c.text ?? '');
    return texts.length ? texts.join(' ') : null;
  }
  return null;
}

/** Cuts text to TRUNCATED_CONTENT_CHARS without splitting a surrogate pair, then appends the marker. */
export function truncateContent(text: string): string {
  let cut = text.slice(0, TRUNCATED_CONTENT_CHARS);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return cut + TRUNCATION_MARKER;
}

export type Normalized =
  | { kind: 'delta'; chunk: MessageChunk }
  | { kind: 'message'; message: Message; terminal: boolean }
  | { kind: 'completed' }
  | { kind: 'failed'; error: string; code: string; retryable: boolean }
  | { kind: 'notice'; type: ResultType; data: Record<string, unknown> }
  | { kind: 'unknown'; type: string }
  | { kind: 'dropped'; reason: string };

/** Parses the result envelope; a missing type is a protocol error that names it. */
export function parseResultEnvelope(raw: unknown): RunResult & { type: string } {
  const env = RunResultSchema.safeParse(raw);
  if (!env.success) throw protocolError(`malformed result: ${firstIssue(env.error, 'result').text}`);
  const type = env.data.type;
  if (typeof type !== 'string' || type === '') throw protocolError('result is missing its type');
  return { ...env.data, type };
}

/** Applies the 1 MiB size rule (bytes): messages get their content truncated, anything else is dropped. */
function applySizeCap(result: RunResult & { type: string }, sizeBytes: number, warn: (m: string) => void): (RunResult & { type: string }) | null {
  // artifact.created carries up to 1 MiB of decoded content, so its own cap applies (§5.6, AC-081), not this one.
  if (sizeBytes <= MAX_RESULT_BYTES || result.type === 'artifact.created') return result;
  const data = result.data;
  const truncate = (holder: unknown): unknown =>
    isRecord(holder) && typeof holder.content === 'string' ? { ...holder, content: truncateContent(holder.content) } : holder;
  if (result.type === 'message.delta') {
    warn(`result ${result.type} is ${sizeBytes} bytes (limit ${MAX_RESULT_BYTES}); its content was truncated`);
    return { ...result, data: { ...data, chunk: truncate(data.chunk) } };
  }
  if (result.type === 'message.completed' || result.type === 'run.completed') {
    warn(`result ${result.type} is ${sizeBytes} bytes (limit ${MAX_RESULT_BYTES}); its content was truncated`);
    return { ...result, data: { ...data, message: truncate(data.message) } };
  }
  warn(`result ${result.type} is ${sizeBytes} bytes (limit ${MAX_RESULT_BYTES}); it was dropped`);
  return null;
}

function parseMessage(value: unknown, type: string): Message {
  if (!isRecord(value) || Object.keys(value).length === 0) throw protocolError(`${type} requires data.message`);
  const m = MessageSchema.safeParse(value);
  if (!m.success) throw protocolError(`${type}: invalid message: ${m.error.issues.map((i) => `${i.path.join('.') || 'message'}: ${i.message}`).join('; ')}`);
  return m.data;
}

/** §5.3 dispatch for one result whose envelope was already parsed. */
export function normalizeResult(result: RunResult & { type: string }, sizeBytes: number, warn: (m: string) => void): Normalized {
  const capped = applySizeCap(result, sizeBytes, warn);
  if (!capped) return { kind: 'dropped', reason: 'oversized' };
  const { type, data } = capped;
  if (!isKnownResultType(type)) return { kind: 'unknown', type };
  switch (type) {
    case 'message.delta': {
      if (!isRecord(data.chunk) || Object.keys(data.chunk).length === 0) throw protocolError('message.delta requires data.chunk');
      const chunk = MessageChunkSchema.safeParse(data.chunk);
      if (!chunk.success) throw protocolError(`message.delta: invalid chunk: ${firstIssue(chunk.error, 'chunk').text}`);
      return { kind: 'delta', chunk: chunk.data };
    }
    case 'message.completed':
      return { kind: 'message', message: parseMessage(data.message, type), terminal: false };
    case 'run.completed':
      return 'message' in data ? { kind: 'message', message: parseMessage(data.message, type), terminal: true } : { kind: 'completed' };
    case 'run.failed': {
      const f = RunFailedDataSchema.safeParse(data);
      const d = f.success ? f.data : { retryable: false };
      return {
        kind: 'failed',
        error: ('error' in d && d.error) || ('message' in d && d.message) || 'Unknown error',
        code: ('code' in d && d.code) || 'unknown',
        retryable: d.retryable,
      };
    }
    case 'tool.call.started':
    case 'tool.call.completed':
    case 'state.updated':
    case 'artifact.created':
    case 'action.requested':
      return { kind: 'notice', type, data };
  }
}
