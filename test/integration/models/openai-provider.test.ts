// The real `openai` provider code (official SDK) against the fake OpenAI-compatible server over loopback:
// wire mapping, streamed tool calls, retries, faults, cancel, deadlines and the extra_args policy.
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelConfigSchema, type ModelConfig } from '../../../src/core/config.js';
import type { ModelCall, ModelProvider } from '../../../src/core/host/ports.js';
import { FakeScriptSchema, type FakeScriptInput } from '../../../src/runtime/models/fake-server-script.js';
import { MAX_UPSTREAM_BODY_BYTES } from '../../../src/runtime/models/bounded-fetch.js';
import { startFakeModelServer, type FakeServer } from '../../../src/runtime/models/fake-server.js';
import { createModelProvider, type ModelProviderOptions } from '../../../src/runtime/models/providers.js';
import { refusal } from './refusal.js';

const KEY = 'sk-test-abcdef123456';
let servers: FakeServer[] = [];

afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function setup(
  script: FakeScriptInput,
  model: Record<string, unknown> = {},
  opts: ModelProviderOptions = {},
): Promise<{ server: FakeServer; provider: ModelProvider; config: ModelConfig }> {
  const server = await startFakeModelServer(FakeScriptSchema.parse({ api_key: KEY, models: ['gpt-4o-mini'], ...script }));
  servers.push(server);
  const config = ModelConfigSchema.parse({
    id: 'm1',
    provider: 'openai',
    base_url: server.openaiBaseUrl,
    model: 'gpt-4o-mini',
    api_key: KEY,
    max_retries: 2,
    ...model,
  });
  return { server, provider: createModelProvider([config], opts), config };
}

const TOOLS = [
  { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  { name: 'get_time', description: 'Local time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } },
];

function call(over: Partial<ModelCall> = {}): ModelCall {
  return {
    model_id: 'm1',
    messages: [{ role: 'user', content: 'hello there' }],
    tools: [],
    extra_args: {},
    deadline_at: null,
    signal: new AbortController().signal,
    ...over,
  };
}

describe('openai provider against the fake server', () => {
  it('invokes without tools: text, usage, finish reason and the upstream model', async () => {
    const { server, provider } = await setup({ steps: [{ content: 'Hi! How can I help?' }] });
    const reply = await provider.invoke(call());
    expect(reply.message).toEqual({ role: 'assistant', content: 'Hi! How can I help?' });
    expect(reply.finish_reason).toBe('stop');
    expect(reply.model).toBe('gpt-4o-mini');
    expect(reply.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 });
    expect(server.requests[0]?.body).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }], stream: false });
  });

  it('invokes with tools: OpenAI tool specs go up, tool calls with ids come back, tool results answer them', async () => {
    const { server, provider } = await setup({
      steps: [{ tool_calls: [{ id: 'call_w', name: 'get_weather', arguments: { city: 'Paris' } }] }, { content: 'It is sunny in Paris.' }],
    });
    const first = await provider.invoke(call({ tools: TOOLS }));
    expect(first.finish_reason).toBe('tool_calls');
    expect(first.message.tool_calls).toEqual([{ id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    const sent = server.requests[0]?.body as { tools: unknown[] };
    expect(sent.tools[0]).toEqual({ type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: TOOLS[0]?.parameters } });
    const second = await provider.invoke(
      call({
        tools: TOOLS,
        messages: [{ role: 'user', content: 'weather in Paris?' }, first.message, { role: 'tool', tool_call_id: 'call_w', content: '{"sky":"sunny"}' }],
      }),
    );
    expect(second.message.content).toBe('It is sunny in Paris.');
  });

  it('the fake refuses what the real API refuses: a tool call left unanswered, lbot-shaped tools', async () => {
    const { server, provider } = await setup({ steps: [] });
    const unanswered = await refusal(
      provider.invoke(
        call({
          messages: [
            { role: 'user', content: 'x' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
            { role: 'user', content: 'y' },
          ],
        }),
      ),
    );
    expect(unanswered.extra).toMatchObject({ status: 400 });
    expect(unanswered.message).toContain('c1');
    const raw = await fetch(`${server.openaiBaseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], tools: [TOOLS[0]] }),
    });
    expect(raw.status).toBe(400);
  });

  it('streams text: chunks carry the text so far, the final message the whole reply and usage', async () => {
    const { provider } = await setup({ chunk_size: 3, steps: [{ content: 'streamed reply text' }] });
    const chunks: string[] = [];
    const reply = await provider.stream(call(), (c) => chunks.push(String(c.content)));
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.at(-1)).toBe('streamed reply text');
    expect(reply.message.content).toBe('streamed reply text');
    expect(reply.usage?.total_tokens).toBeGreaterThan(0);
    expect(reply.finish_reason).toBe('stop');
  });

  it('a streamed tool call split across chunks arrives whole (two calls, accumulated by index)', async () => {
    const args = { city: 'San Francisco, CA', unit: 'celsius', days: [1, 2, 3] };
    const { server, provider } = await setup({
      chunk_size: 2,
      steps: [
        {
          content: 'Checking.',
          tool_calls: [
            { id: 'call_a', name: 'get_weather', arguments: args },
            { id: 'call_b', name: 'get_time', arguments: { tz: 'PST' } },
          ],
        },
      ],
    });
    const reply = await provider.stream(call({ tools: TOOLS }), () => {});
    expect(server.requests[0]?.stream).toBe(true);
    expect(reply.finish_reason).toBe('tool_calls');
    expect(reply.message.content).toBe('Checking.');
    expect(reply.message.tool_calls?.map((c) => c.id)).toEqual(['call_a', 'call_b']);
    expect(JSON.parse(reply.message.tool_calls?.[0]?.function.arguments ?? '')).toEqual(args);
    expect(JSON.parse(reply.message.tool_calls?.[1]?.function.arguments ?? '')).toEqual({ tz: 'PST' });
  });

  it('429 with Retry-After, then success: the SDK retries', async () => {
    const { server, provider } = await setup({ steps: [{ fault: { status: 429, retry_after_s: 0.05 } }, { content: 'after the wait' }] });
    const reply = await provider.invoke(call());
    expect(reply.message.content).toBe('after the wait');
    expect(server.requests).toHaveLength(2);
  });

  it('500 on every attempt ends in a retryable downstream_error with status and host', async () => {
    const { server, provider } = await setup({ steps: [{ fault: { status: 500 }, times: 5 }] }, { max_retries: 1 });
    const err = await refusal(provider.invoke(call()));
    expect(server.requests).toHaveLength(2);
    expect(err.toWire()).toMatchObject({
      code: 'runtime_error',
      retryable: true,
      details: { reason: 'downstream_error', status: 500, host: new URL(server.url).host },
    });
  });

  it('a malformed chunk gives a clear, non-retryable error', async () => {
    const { provider } = await setup({ steps: [{ content: 'abcdefgh', fault: 'malformed_chunk' }] });
    const err = await refusal(provider.stream(call(), () => {}));
    expect(err.message).toMatch(/malformed stream chunk/);
    expect(err.retryable).toBe(false);
  });

  it('a dropped connection mid-stream gives a clear, retryable error', async () => {
    const { provider } = await setup({ steps: [{ content: 'abcdefgh', fault: 'drop' }] });
    const err = await refusal(provider.stream(call(), () => {}));
    expect(err.message).toMatch(/connection dropped mid-response|connection failed/);
    expect(err.retryable).toBe(true);
  });

  it('cancel mid-stream closes the upstream connection', async () => {
    const { server, provider } = await setup({ chunk_size: 1, chunk_delay_ms: 30, steps: [{ content: 'a long reply that takes a while to stream out' }] });
    const ac = new AbortController();
    const chunks: unknown[] = [];
    const pending = provider.stream(call({ signal: ac.signal }), (c) => {
      chunks.push(c);
      if (chunks.length === 2) ac.abort();
    });
    const err = await refusal(pending);
    expect(err.extra).toMatchObject({ model_id: 'm1' });
    expect(err.reason).toBe('cancelled');
    await expect.poll(() => server.abortedStreams, { timeout: 5000 }).toBe(1);
    expect(chunks.length).toBeLessThan(10);
  });

  it("a runner's extra_args.model never reaches the upstream body; allowed args do; max_tokens is capped", async () => {
    const { server, provider } = await setup({ steps: [{ content: 'ok' }] }, { extra_args: { model: 'gpt-5-pro', temperature: 0.1 }, max_tokens_cap: 100 });
    const err = await refusal(provider.invoke(call({ extra_args: { model: 'gpt-5-pro' } })));
    expect(err.toWire()).toMatchObject({ code: 'invalid_argument', details: { reason: 'extra_arg_not_allowed', key: 'model' } });
    for (const extra_args of [{ stream: true }, { messages: [] }, { tools: [] }, { api_base: 'http://evil' }, { max_tokens: 101 }, { temperature: 9 }]) {
      expect((await refusal(provider.invoke(call({ extra_args })))).code).toBe('invalid_argument');
    }
    expect(server.requests).toHaveLength(0);
    await provider.invoke(call({ extra_args: { temperature: 0.5, max_tokens: 50, seed: 7 } }));
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.body).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.5, max_tokens: 50, seed: 7 });
  });

  it('a runaway reply is cut off: payload_too_large, streamed or not, and the stream is closed', async () => {
    const huge = 'x'.repeat(1_000_001);
    const { server, provider } = await setup({ chunk_size: 100_000, steps: [{ content: huge }, { content: huge, chunk_delay_ms: 20 }] });
    expect((await refusal(provider.invoke(call()))).toWire()).toMatchObject({ code: 'payload_too_large', details: { reason: 'reply_too_large' } });
    expect((await refusal(provider.stream(call(), () => {}))).code).toBe('payload_too_large');
    await expect.poll(() => server.abortedStreams, { timeout: 5000 }).toBe(1);
  });

  // Small caps keep the test quick; the defaults (bounded-fetch.ts) only scale them.
  const limits = { bodyBytes: 1024 * 1024, eventBytes: 256 * 1024 };
  const huge = (content_length?: 'exact' | 'none' | 'understated') => ({ fault: { huge_body: { bytes: 64 * 1024 * 1024, content_length } } });

  it('a huge upstream body stops at the cap while it is read: exact Content-Length, chunked, one endless event', async () => {
    const long = 'x'.repeat(600_000);
    const steps = [huge('exact'), huge('none'), huge(), { content: 'still fine' }, { content: long }];
    const { server, provider } = await setup({ chunk_size: 1000, steps }, {}, { bodyLimits: limits });
    // Refused from the declared length, before the body is read.
    const declared = await refusal(provider.invoke(call()));
    expect(declared.toWire()).toMatchObject({ code: 'payload_too_large', retryable: false, details: { reason: 'upstream_body_too_large' } });
    expect(declared.message).toContain('Content-Length');
    await expect.poll(() => server.abortedStreams, { timeout: 10_000 }).toBe(1);
    // No length (chunked): counted while read and stopped at the cap; the server never got to write the whole body.
    const chunked = await refusal(provider.invoke(call()));
    expect(chunked.toWire()).toMatchObject({ code: 'payload_too_large', details: { reason: 'upstream_body_too_large', limit: limits.bodyBytes } });
    await expect.poll(() => server.abortedStreams, { timeout: 10_000 }).toBe(2);
    // A stream whose one event never ends stops at the event cap, not at the end of the body.
    const event = await refusal(provider.stream(call(), () => {}));
    expect(event.toWire()).toMatchObject({ code: 'payload_too_large', details: { reason: 'upstream_body_too_large', limit: limits.eventBytes } });
    await expect.poll(() => server.abortedStreams, { timeout: 10_000 }).toBe(3);
    // A refused body is not retried, and the provider keeps working.
    expect(server.requests).toHaveLength(3);
    expect((await provider.invoke(call())).message.content).toBe('still fine');
    // The event cap is per event: a long stream of short events is whole.
    expect((await provider.stream(call(), () => {})).message.content).toBe(long);
  });

  it('an understated Content-Length does not smuggle a huge body in: the reply is cut at the declared length', async () => {
    const { server, provider } = await setup({ steps: [huge('understated')] }, {}, { bodyLimits: limits });
    const err = await refusal(provider.invoke(call()));
    expect(err.toWire()).toMatchObject({ code: 'runtime_error', retryable: false, details: { reason: 'downstream_error', cause: 'malformed_chunk' } });
    await expect.poll(() => server.abortedStreams, { timeout: 10_000 }).toBe(1);
  });

  it('the default body cap refuses a body declared one byte over it', async () => {
    const { server, provider } = await setup({ steps: [{ fault: { huge_body: { bytes: MAX_UPSTREAM_BODY_BYTES + 1, content_length: 'exact' } } }] });
    expect((await refusal(provider.invoke(call()))).toWire()).toMatchObject({ code: 'payload_too_large', details: { limit: MAX_UPSTREAM_BODY_BYTES } });
    await expect.poll(() => server.abortedStreams, { timeout: 10_000 }).toBe(1);
  });

  it('a model without function calling gets no tools', async () => {
    const { server, provider } = await setup({ steps: [{ content: 'no tools here' }] }, { function_calling: false });
    await provider.invoke(call({ tools: TOOLS }));
    expect(server.requests[0]?.body).not.toHaveProperty('tools');
  });

  it('remove_think strips reasoning blocks (configured, and overridden per call)', async () => {
    const { provider } = await setup(
      { steps: [{ content: '<think>step 1, step 2</think>The answer is 4.' }, { content: '<think>x</think>kept' }] },
      { remove_think: true },
    );
    expect((await provider.invoke(call())).message.content).toBe('The answer is 4.');
    expect((await provider.invoke(call({ remove_think: false }))).message.content).toBe('<think>x</think>kept');
  });

  it('errors name the cause: refused connection, invalid key (never echoed), unknown model', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const addr = s.address();
        s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
      });
    });
    const refused = createModelProvider([
      ModelConfigSchema.parse({ id: 'm1', provider: 'openai', base_url: `http://127.0.0.1:${closed}/v1`, model: 'x', api_key: KEY, max_retries: 0 }),
    ]);
    const conn = await refusal(refused.invoke(call()));
    expect(conn.message).toContain(`ECONNREFUSED 127.0.0.1:${closed}`);
    expect(conn.retryable).toBe(true);

    const { provider: badKey } = await setup({}, { api_key: 'sk-wrong-key-999999' });
    const auth = await refusal(badKey.invoke(call()));
    expect(auth.message).toContain('401 invalid api key');
    expect(auth.retryable).toBe(false);
    expect(JSON.stringify(auth.toWire())).not.toContain('sk-wrong-key-999999');

    const { provider: unknown } = await setup({}, { model: 'gpt-nope' });
    const missing = await refusal(unknown.invoke(call()));
    expect(missing.message).toContain('model or endpoint not found');
    expect(missing.extra).toMatchObject({ status: 404, upstream_code: 'model_not_found' });
  });

  it('the run deadline bounds the call: past deadline refuses, a slow first token ends in deadline_exceeded', async () => {
    const { provider } = await setup({ first_token_delay_ms: 2000, steps: [{ content: 'late' }] });
    expect((await refusal(provider.invoke(call({ deadline_at: Date.now() / 1000 - 1 })))).code).toBe('deadline_exceeded');
    const err = await refusal(provider.stream(call({ deadline_at: Date.now() / 1000 + 0.3 }), () => {}));
    expect(err.code).toBe('deadline_exceeded');
  });

  it('embeds through /embeddings and reranks through /rerank with {model, query, documents, top_n}', async () => {
    const { server, provider } = await setup({ models: ['gpt-4o-mini'] });
    const emb = await provider.embed({ model_id: 'm1', input: ['alpha', 'beta', 'alpha'], deadline_at: null, signal: new AbortController().signal });
    expect(emb.embeddings).toHaveLength(3);
    expect(emb.embeddings[0]).toEqual(emb.embeddings[2]);
    expect(emb.embeddings[0]).not.toEqual(emb.embeddings[1]);
    const ranked = await provider.rerank({
      model_id: 'm1',
      query: 'red apple',
      documents: ['a blue sky', 'a red apple', 'red car'],
      top_n: 2,
      deadline_at: null,
      signal: new AbortController().signal,
    });
    expect(ranked[0]).toEqual({ index: 1, relevance_score: 1 });
    expect(ranked).toHaveLength(2);
    expect(server.requests.at(-1)).toMatchObject({
      path: '/v1/rerank',
      body: { model: 'gpt-4o-mini', query: 'red apple', documents: ['a blue sky', 'a red apple', 'red car'], top_n: 2 },
    });
  });

  it('counts tokens with the real tokenizer of a known model, and refuses an unknown tokenizer', async () => {
    const { provider } = await setup({});
    const counted = await provider.countTokens({ model_id: 'm1', messages: [], text: 'hello world', tools: [] });
    expect(counted).toEqual({ tokens: 2, context_window: 128000, tokenizer: 'o200k_base' });
    const unknown = createModelProvider([
      ModelConfigSchema.parse({ id: 'local', provider: 'openai', base_url: 'http://127.0.0.1:1/v1', model: 'llama3.1:8b' }),
    ]);
    const err = await refusal(unknown.countTokens({ model_id: 'local', messages: [{ role: 'user', content: 'hi' }], tools: [] }));
    expect(err.toWire()).toMatchObject({ code: 'not_found', details: { reason: 'tokenizer_not_found' } });
  });
});
