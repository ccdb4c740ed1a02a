// Result normalization (runner-protocol.md §5.3): envelope, size rule, dispatch and reply text.
import { describe, expect, it } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import { messageText, normalizeResult, parseResultEnvelope, truncateContent } from '../../../src/core/host/result-normalizer.js';

const MIB = 1024 * 1024;

function normalize(raw: unknown, size?: number) {
  const warnings: string[] = [];
  const env = parseResultEnvelope(raw);
  const n = normalizeResult(env, size ?? Buffer.byteLength(JSON.stringify(raw)), (m) => warnings.push(m));
  return { n, warnings };
}

function protocolMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof LbotError && err.code === 'runner.protocol_error') return err.message;
    throw err;
  }
  throw new Error('expected runner.protocol_error');
}

describe('parseResultEnvelope and normalizeResult', () => {
  it('rejects a result without a type (AC-071)', () => {
    expect(protocolMessage(() => parseResultEnvelope({ data: {} }))).toMatch(/missing its type/);
    expect(protocolMessage(() => parseResultEnvelope({ type: '', data: {} }))).toMatch(/type/);
  });

  it('validates deltas and messages (AC-071)', () => {
    expect(protocolMessage(() => normalize({ type: 'message.delta', data: {} }))).toMatch(/chunk/);
    expect(protocolMessage(() => normalize({ type: 'message.completed', data: {} }))).toMatch(/data\.message/);
    expect(protocolMessage(() => normalize({ type: 'message.completed', data: { message: { content: 42 } } }))).toMatch(/role/);
    expect(normalize({ type: 'message.delta', data: { chunk: { role: 'assistant', content: 'he' } } }).n).toMatchObject({
      kind: 'delta',
      chunk: { content: 'he' },
    });
  });

  it('treats run.completed with a message as the final message (AC-076)', () => {
    expect(normalize({ type: 'run.completed', data: { message: { role: 'assistant', content: 'done' } } }).n).toMatchObject({
      kind: 'message',
      terminal: true,
    });
    expect(normalize({ type: 'run.completed', data: {} }).n).toEqual({ kind: 'completed' });
  });

  it('applies run.failed defaults and the message fallback (AC-074)', () => {
    expect(normalize({ type: 'run.failed', data: { code: 'runner.error', error: 'upstream 502', retryable: true } }).n).toEqual({
      kind: 'failed',
      error: 'upstream 502',
      code: 'runner.error',
      retryable: true,
    });
    expect(normalize({ type: 'run.failed', data: {} }).n).toEqual({ kind: 'failed', error: 'Unknown error', code: 'unknown', retryable: false });
    expect(normalize({ type: 'run.failed', data: { message: 'from message' } }).n).toMatchObject({ error: 'from message', code: 'unknown' });
  });

  it('passes notices through and reports unknown and legacy types (AC-070)', () => {
    for (const type of ['tool.call.started', 'tool.call.completed', 'state.updated', 'artifact.created', 'action.requested']) {
      expect(normalize({ type, data: { a: 1 } }).n).toEqual({ kind: 'notice', type, data: { a: 1 } });
    }
    for (const type of ['telemetry.custom', 'chunk', 'text', 'finish']) expect(normalize({ type, data: {} }).n).toEqual({ kind: 'unknown', type });
  });

  it('truncates oversized messages to 10,000 characters plus the marker (AC-079)', () => {
    const big = 'z'.repeat(2 * MIB);
    const msg = normalize({ type: 'message.completed', data: { message: { role: 'assistant', content: big } } });
    expect(msg.n.kind === 'message' && msg.n.message.content).toBe(`${'z'.repeat(10_000)}...[truncated]`);
    expect(msg.warnings.join()).toMatch(/\d{7} bytes/);
    const chunk = normalize({ type: 'message.delta', data: { chunk: { role: 'assistant', content: big } } });
    expect(chunk.n.kind === 'delta' && String(chunk.n.chunk.content)).toHaveLength(10_014);
  });

  it('drops other oversized results, but not artifact.created, whose own cap applies (AC-081)', () => {
    const dropped = normalize({ type: 'tool.call.completed', data: { result: { blob: 'x'.repeat(MIB + 10) } } });
    expect(dropped.n).toEqual({ kind: 'dropped', reason: 'oversized' });
    expect(dropped.warnings).toHaveLength(1);
    expect(normalize({ type: 'artifact.created', data: { artifact_type: 'file', content_base64: 'A'.repeat(1_398_104) } }).n.kind).toBe('notice');
  });

  it('measures the size in UTF-8 bytes', () => {
    const content = 'é'.repeat(600_000); // 1.2 MB in UTF-8, 600,000 characters
    const raw = { type: 'message.completed', data: { message: { role: 'assistant', content } } };
    expect(normalize(raw).warnings).toHaveLength(1);
  });
});

describe('message text', () => {
  it('joins text elements and ignores the rest', () => {
    expect(messageText({ content: 'plain' })).toBe('plain');
    expect(messageText({ content: [{ type: 'text', text: 'a' }, { type: 'image_url' }, { type: 'text', text: 'b' }] })).toBe('a b');
    expect(messageText({ content: [{ type: 'image_url' }] })).toBeNull();
    expect(messageText({ content: null })).toBeNull();
  });

  it('never splits a surrogate pair when truncating', () => {
    const text = `${'a'.repeat(9_999)}😀tail`;
    const cut = truncateContent(text);
    expect(cut).toBe(`${'a'.repeat(9_999)}...[truncated]`);
  });
});
