// The boundary shapes declared once: the zod issue reading, and the result-stream lines.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LbotError } from '../../../src/core/errors.js';
import { deliveredLine, observedLine, summaryLine } from '../../../src/core/protocol/result-line.js';
import { ErrorValueSchema } from '../../../src/core/protocol/error-value.js';
import { firstIssue, parseOrThrow } from '../../../src/core/zod-issue.js';

describe('zod issues', () => {
  const Schema = z.strictObject({ a: z.object({ b: z.number() }) });

  it('reads the first issue as path: message, with the path and zod code', () => {
    const r = Schema.safeParse({ a: { b: 'x' } });
    expect(r.success).toBe(false);
    if (r.success) return;
    expect(firstIssue(r.error)).toMatchObject({ path: ['a', 'b'], code: 'invalid_type', text: expect.stringMatching(/^a\.b: /) });
    expect(firstIssue(r.error, '(root)', ['section']).text).toMatch(/^section\.a\.b: /);
  });

  it('names the value itself when the path is empty', () => {
    const r = Schema.safeParse('nope');
    if (r.success) throw new Error('parsed');
    expect(firstIssue(r.error, '(body)').text).toMatch(/^\(body\): /);
  });

  it('parseOrThrow throws the coded error with the path in details, keeping the hint', () => {
    try {
      parseOrThrow(Schema, { a: { b: 1 }, extra: true }, 'POST /x', '(body)', 'box.validation', { hint: 'drop it' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(LbotError);
      expect(err).toMatchObject({ code: 'box.validation', hint: 'drop it', details: { path: [] } });
      expect((err as Error).message).toMatch(/^POST \/x: \(body\): /);
    }
    expect(parseOrThrow(Schema, { a: { b: 1 } }, 'x', '(body)')).toEqual({ a: { b: 1 } });
  });
});

describe('result-stream lines', () => {
  it('wraps delivered payloads under data, marks observed notices, and summarizes with retryable', () => {
    expect(deliveredLine({ type: 'message.delta', run_id: 'r', chunk: { role: 'assistant', content: 'he' } })).toEqual({
      type: 'message.delta',
      run_id: 'r',
      data: { chunk: { role: 'assistant', content: 'he' } },
    });
    expect(deliveredLine({ type: 'message.completed', run_id: 'r', message: { role: 'assistant', content: 'hi' } })).toEqual({
      type: 'message.completed',
      run_id: 'r',
      data: { message: { role: 'assistant', content: 'hi' } },
    });
    expect(observedLine('r', { type: 'action.requested', data: { action: 'kick' }, executed: false })).toEqual({
      type: 'action.requested',
      run_id: 'r',
      data: { action: 'kick' },
      observed: true,
      executed: false,
    });
    expect(observedLine('r', { type: 'state.updated', data: {} })).not.toHaveProperty('executed');
    const error = { code: 'rate_limited', message: 'busy', retryable: true, details: {} };
    const line = summaryLine({ run_id: 'r', runner_id: 'x', binding_id: 'b', event_id: 'e', status: 'failed', error });
    expect(line).toEqual({ type: 'run.summary', run_id: 'r', runner_id: 'x', binding_id: 'b', event_id: 'e', status: 'failed', error, retryable: true });
    expect(ErrorValueSchema.parse(line.error)).toEqual(error);
    expect(new LbotError('not_found', 'gone').toJSON()).toEqual(ErrorValueSchema.parse(new LbotError('not_found', 'gone').toJSON()));
  });
});
