// Sampling requests of MCP servers (runtime/mcp/sampling.ts): no grant, no sampler; a grant turns the
// request into a chat for the host's model provider, bounded; what lbot cannot serve is refused.
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { ModelConfigSchema } from '../../../src/core/config.js';
import type { ModelCall, ModelProvider } from '../../../src/core/host/ports.js';
import { McpServerRecordSchema } from '../../../src/runtime/mcp/config.js';
import { createSampler, SAMPLING_MAX_MESSAGES } from '../../../src/runtime/mcp/sampling.js';

const record = (sampling: Record<string, unknown>) => McpServerRecordSchema.parse({ name: 'srv', command: ['node', 'x.js'], sampling });
const models = [ModelConfigSchema.parse({ id: 'm1', provider: 'fake', reply: 'ok', max_tokens_cap: 512 })];

/** A provider that records each call and answers like the fake provider. */
function recording(): { provider: ModelProvider; calls: ModelCall[] } {
  const calls: ModelCall[] = [];
  const refuse = () => Promise.reject(new Error('not used by sampling'));
  const provider: ModelProvider = {
    invoke: (req) => {
      calls.push(req);
      return Promise.resolve({ message: { role: 'assistant', content: 'ok' }, usage: null, finish_reason: 'length', model: 'fake-1' });
    },
    stream: refuse,
    rerank: refuse,
    embed: refuse,
    countTokens: refuse,
  };
  return { provider, calls };
}

const text = (t: string) => ({ type: 'text' as const, text: t });
const ask = (over: Record<string, unknown> = {}) => ({ messages: [{ role: 'user' as const, content: text('hi') }], maxTokens: 100_000, ...over });

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'served';
  } catch (err) {
    return err instanceof McpError ? err.message : `not an McpError: ${String(err)}`;
  }
}

describe('sampling', () => {
  it('no grant gives no sampler', () => {
    expect(createSampler(record({}), { models: () => models, provider: () => Promise.reject(new Error('unused')) })).toBeNull();
  });

  it('a granted model answers; maxTokens is cut to the grant and the model cap; the system prompt leads', async () => {
    const { provider, calls } = recording();
    const sampler = createSampler(record({ model: 'm1', max_tokens: 4096 }), { models: () => models, provider: () => Promise.resolve(provider) });
    const result = await sampler?.(ask({ systemPrompt: 'be brief', temperature: 0.2 }), new AbortController().signal);
    expect(result).toEqual({ role: 'assistant', content: text('ok'), model: 'fake-1', stopReason: 'maxTokens' });
    expect(calls[0]).toMatchObject({
      model_id: 'm1',
      tools: [],
      extra_args: { max_tokens: 512, temperature: 0.2 },
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
    });
  });

  it('refuses what it cannot serve, before the model is called', async () => {
    const { provider, calls } = recording();
    const sampler = createSampler(record({ model: 'm1' }), { models: () => models, provider: () => Promise.resolve(provider) });
    const signal = new AbortController().signal;
    const image = { type: 'image' as const, data: 'AAAA', mimeType: 'image/png' };
    expect(await refusal(sampler!(ask({ messages: [{ role: 'user', content: image }] }), signal))).toContain('text content only, not image');
    expect(await refusal(sampler!(ask({ messages: [] }), signal))).toContain(`1 to ${SAMPLING_MAX_MESSAGES} messages`);
    const many = Array.from({ length: SAMPLING_MAX_MESSAGES + 1 }, () => ({ role: 'user' as const, content: text('x') }));
    expect(await refusal(sampler!(ask({ messages: many }), signal))).toContain(`1 to ${SAMPLING_MAX_MESSAGES} messages`);
    const huge = [{ role: 'user' as const, content: text('x'.repeat(1024 * 1024 + 1)) }];
    expect(await refusal(sampler!(ask({ messages: huge }), signal))).toContain('over the 1048576-byte cap');
    expect(await refusal(sampler!(ask({ tools: [{ name: 't', inputSchema: { type: 'object' } }] }), signal))).toContain('offers no tools');
    const dangling = createSampler(record({ model: 'gone' }), { models: () => models, provider: () => Promise.resolve(provider) });
    expect(await refusal(dangling!(ask(), signal))).toContain('no such llm model is configured');
    expect(calls).toEqual([]);
  });
});
