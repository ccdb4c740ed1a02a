// A count with nothing to encode (the local agent's probe for the context window) answers without loading the
// encoding, which costs a fresh host a few hundred milliseconds; anything to encode still loads it.
import { describe, expect, it, vi } from 'vitest';
import { ModelConfigSchema } from '../../../src/core/config.js';
import { ApiError } from '../../../src/core/host/api-error.js';
import { countTokens } from '../../../src/runtime/models/tokens.js';

const loads = vi.hoisted(() => ({ count: 0 }));
vi.mock('gpt-tokenizer/encoding/o200k_base', () => {
  loads.count += 1;
  return { countTokens: (text: string) => text.length };
});

const model = (over: Record<string, unknown> = {}) =>
  ModelConfigSchema.parse({ id: 'm', provider: 'openai', base_url: 'http://127.0.0.1:1/v1', model: 'gpt-4o-mini', ...over });

describe('models.count_tokens of an empty request', () => {
  it('answers the context window without loading the encoding', async () => {
    await expect(countTokens(model(), { messages: [], tools: [] })).resolves.toEqual({ tokens: 0, context_window: 128000, tokenizer: 'o200k_base' });
    await expect(countTokens(model(), { text: '', messages: [], tools: [] })).resolves.toMatchObject({ tokens: 0 });
    expect(loads.count).toBe(0);
    await expect(countTokens(model(), { text: 'hi', messages: [], tools: [] })).resolves.toMatchObject({ tokens: 2 });
    expect(loads.count).toBe(1);
    // A message counts its framing even when empty.
    await expect(countTokens(model(), { messages: [{ role: 'user', content: '' }], tools: [] })).resolves.toMatchObject({ tokens: 10 });
  });

  it('still refuses a model whose tokenizer is unknown', async () => {
    const err: unknown = await countTokens(model({ model: 'llama3.1:8b' }), { messages: [], tools: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err instanceof ApiError && err.toWire()).toMatchObject({ code: 'not_found', details: { reason: 'tokenizer_not_found' } });
  });
});
