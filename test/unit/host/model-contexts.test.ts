// The message contexts of model calls: what a continued call resolves to, and the bounds a runner cannot
// get past (other runs, evicted and ended contexts, a context larger than one request line).
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/core/host/api-error.js';
import { CONTEXTS_PER_RUN, MAX_CONTEXT_BYTES, ModelContexts } from '../../../src/core/host/model-contexts.js';
import type { Message } from '../../../src/core/protocol/context.js';
import { thrown } from '../../helpers/thrown.js';

const msg = (content: string, role = 'user'): Message => ({ role, content });

const refused = (fn: () => unknown): ApiError => thrown(fn, ApiError);

describe('ModelContexts', () => {
  it('keeps nothing unless asked; a kept context is continued with the messages after it', () => {
    const c = new ModelContexts();
    c.open('r1');
    expect(c.resolve('r1', { messages: [msg('a')] }).keep).toBeNull();
    expect(c.count('r1')).toBe(0);
    const first = c.resolve('r1', { messages: [msg('a')], keep_context: true });
    const id = first.keep?.() ?? '';
    const next = c.resolve('r1', { messages: [msg('b', 'assistant'), msg('c')], context_id: id });
    expect(next.messages).toEqual([msg('a'), msg('b', 'assistant'), msg('c')]);
    // The same context may be continued twice (a fallback model gets the same request).
    expect(c.resolve('r1', { messages: [msg('x')], context_id: id }).messages).toEqual([msg('a'), msg('x')]);
    expect(next.keep).not.toBeNull();
  });

  it('a context belongs to its run, and is gone once the run ends', () => {
    const c = new ModelContexts();
    c.open('r1');
    c.open('r2');
    const id = c.resolve('r1', { messages: [msg('secret')], keep_context: true }).keep?.() ?? '';
    expect(refused(() => c.resolve('r2', { messages: [], context_id: id })).reason).toBe('context_unknown');
    const late = c.resolve('r1', { messages: [], context_id: id });
    c.drop('r1');
    expect(refused(() => c.resolve('r1', { messages: [], context_id: id })).reason).toBe('context_unknown');
    // A call that answers after its run ended keeps nothing.
    late.keep?.();
    expect(c.count('r1')).toBe(0);
  });

  it(`keeps the ${CONTEXTS_PER_RUN} most recently used contexts of a run`, () => {
    const c = new ModelContexts();
    c.open('r1');
    const ids = Array.from({ length: CONTEXTS_PER_RUN }, (_, i) => c.resolve('r1', { messages: [msg(String(i))], keep_context: true }).keep?.() ?? '');
    // Using the oldest makes it the newest: the next one evicts the second.
    c.resolve('r1', { messages: [], context_id: ids[0] });
    c.resolve('r1', { messages: [msg('new')], keep_context: true }).keep?.();
    expect(c.count('r1')).toBe(CONTEXTS_PER_RUN);
    expect(c.resolve('r1', { messages: [], context_id: ids[0] }).messages).toEqual([msg('0')]);
    expect(refused(() => c.resolve('r1', { messages: [], context_id: ids[1] })).reason).toBe('context_unknown');
  });

  it('refuses a context larger than one request line could carry, however it is grown', () => {
    const c = new ModelContexts();
    c.open('r1');
    const half = msg('x'.repeat(MAX_CONTEXT_BYTES / 2));
    const id = c.resolve('r1', { messages: [half], keep_context: true }).keep?.() ?? '';
    const err = refused(() => c.resolve('r1', { messages: [half], context_id: id }));
    expect([err.code, err.reason]).toEqual(['payload_too_large', 'context_too_large']);
    expect(refused(() => c.resolve('r1', { messages: [half, half], keep_context: true })).reason).toBe('context_too_large');
    // Counted in UTF-8 bytes: two-byte characters fill the cap at half the characters.
    const wide = msg('é'.repeat(MAX_CONTEXT_BYTES / 2 + 16));
    expect(refused(() => c.resolve('r1', { messages: [wide], keep_context: true })).reason).toBe('context_too_large');
  });
});
