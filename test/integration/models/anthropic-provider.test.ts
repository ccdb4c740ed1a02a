// The real `anthropic` provider code (official SDK) against the fake Messages endpoint over loopback:
// system/tool_use/tool_result mapping, streamed tool input split across deltas, retries, faults, cancel.
import { afterEach, describe, expect, it } from 'vitest';
import { ModelConfigSchema } from '../../../src/core/config.js';
import type { ModelCall, ModelProvider } from '../../../src/core/host/ports.js';
import { FakeScriptSchema, type FakeScriptInput } from '../../../src/runtime/models/fake-server-script.js';
import { startFakeModelServer, type FakeServer } from '../../../src/runtime/models/fake-server.js';
import { createModelProvider, type ModelProviderOptions } from '../../../src/runtime/models/providers.js';
import { refusal } from './refusal.js';

const KEY = 'sk-ant-test-0123456789';
let servers: FakeServer[] = [];

afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function setup(
  script: FakeScriptInput,
  model: Record<string, unknown> = {},
  opts: ModelProviderOptions = {},
): Promise<{ server: FakeServer; provider: ModelProvider }> {
  const server = await startFakeModelServer(FakeScriptSchema.parse({ api_key: KEY, models: ['claude-sonnet-4-5'], ...script }));
  servers.push(server);
  const config = ModelConfigSchema.parse({
    id: 'c1',
    provider: 'anthropic',
    base_url: server.anthropicBaseUrl,
    model: 'claude-sonnet-4-5',
    api_key: KEY,
    max_retries: 2,
    ...model,
  });
  return { server, provider: createModelProvider([config], opts) };
}

const TOOLS = [
  { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
];

function call(over: Partial<ModelCall> = {}): ModelCall {
  return {
    model_id: 'c1',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hello there' },
    ],
    tools: [],
    extra_args: {},
    deadline_at: null,
    signal: new AbortController().signal,
    ...over,
  };
}

describe('anthropic provider against the fake Messages endpoint', () => {
  it('invokes without tools: system goes top-level, usage and finish reason come back', async () => {
    const { server, provider } = await setup({ steps: [{ content: 'Hello!' }] });
    const reply = await provider.invoke(call());
    expect(reply).toMatchObject({
      message: { role: 'assistant', content: 'Hello!' },
      finish_reason: 'stop',
      model: 'claude-sonnet-4-5',
      usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
    });
    expect(server.requests[0]?.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      stream: false,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
    });
  });

  it('invokes with tools: input_schema tools, tool_use back as tool calls, tool results as tool_result blocks', async () => {
    const { server, provider } = await setup({
      steps: [{ content: 'Let me check.', tool_calls: [{ id: 'toolu_1', name: 'get_weather', arguments: { city: 'Oslo' } }] }, { content: 'Snow in Oslo.' }],
    });
    const first = await provider.invoke(call({ tools: TOOLS }));
    expect(first.finish_reason).toBe('tool_calls');
    expect(first.message).toMatchObject({
      content: 'Let me check.',
      tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
    });
    expect((server.requests[0]?.body as { tools: unknown[] }).tools).toEqual([
      { name: 'get_weather', description: 'Weather of a city', input_schema: TOOLS[0]?.parameters },
    ]);
    const second = await provider.invoke(
      call({ tools: TOOLS, messages: [...call().messages, first.message, { role: 'tool', tool_call_id: 'toolu_1', content: 'snow' }] }),
    );
    expect(second.message.content).toBe('Snow in Oslo.');
    expect((server.requests[1]?.body as { messages: unknown[] }).messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'snow' }] },
    ]);
  });

  it('a tool result for an unknown tool_use id is refused upstream like the real API does', async () => {
    const { provider } = await setup({});
    const err = await refusal(
      provider.invoke(
        call({
          messages: [
            { role: 'user', content: 'x' },
            { role: 'assistant', content: 'ok' },
            { role: 'tool', tool_call_id: 'toolu_zz', content: 'r' },
          ],
        }),
      ),
    );
    expect(err.extra).toMatchObject({ status: 400 });
    expect(err.message).toContain('toolu_zz');
  });

  it('streams text and a tool call whose input arrives split across deltas', async () => {
    const input = { city: 'Reykjavík', days: [1, 2], detail: 'hourly' };
    const { provider } = await setup({
      chunk_size: 3,
      steps: [{ content: 'Checking now', tool_calls: [{ id: 'toolu_s', name: 'get_weather', arguments: input }] }],
    });
    const chunks: string[] = [];
    const reply = await provider.stream(call({ tools: TOOLS }), (c) => chunks.push(String(c.content)));
    expect(chunks.at(-1)).toBe('Checking now');
    expect(reply.finish_reason).toBe('tool_calls');
    expect(reply.message.tool_calls?.[0]?.id).toBe('toolu_s');
    expect(JSON.parse(reply.message.tool_calls?.[0]?.function.arguments ?? '')).toEqual(input);
    expect(reply.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 3 });
  });

  it('429 with Retry-After then success is retried; 500 on every attempt is a retryable downstream_error', async () => {
    const { server, provider } = await setup({ steps: [{ fault: { status: 429, retry_after_s: 0.05 } }, { content: 'ok now' }] });
    expect((await provider.invoke(call())).message.content).toBe('ok now');
    expect(server.requests).toHaveLength(2);
    const { server: failing, provider: broken } = await setup({ steps: [{ fault: { status: 500 }, times: 9 }] }, { max_retries: 1 });
    const err = await refusal(broken.invoke(call()));
    expect(failing.requests).toHaveLength(2);
    expect(err.toWire()).toMatchObject({
      code: 'runtime_error',
      retryable: true,
      details: { reason: 'downstream_error', status: 500, upstream_code: 'api_error' },
    });
  });

  it('a malformed event and a dropped connection give clear errors', async () => {
    const { provider } = await setup({
      steps: [
        { content: 'abcdefgh', fault: 'malformed_chunk' },
        { content: 'abcdefgh', fault: 'drop' },
      ],
    });
    const malformed = await refusal(provider.stream(call(), () => {}));
    expect(malformed.message).toMatch(/malformed stream chunk/);
    const dropped = await refusal(provider.stream(call(), () => {}));
    expect(dropped.message).toMatch(/connection dropped mid-response|connection failed/);
    expect(dropped.retryable).toBe(true);
  });

  it('a huge body stops at the cap while it is read, non-streamed (chunked) and streamed (one endless event)', async () => {
    const limits = { bodyBytes: 1024 * 1024, eventBytes: 256 * 1024 };
    const huge = { fault: { huge_body: { bytes: 64 * 1024 * 1024 } } };
    const { server, provider } = await setup({ steps: [huge, huge] }, {}, { bodyLimits: limits });
    const body = await refusal(provider.invoke(call()));
    expect(body.toWire()).toMatchObject({
      code: 'payload_too_large',
      retryable: false,
      details: { reason: 'upstream_body_too_large', limit: limits.bodyBytes },
    });
    await expect.poll(() => server.abortedStreams, { timeout: 10_000 }).toBe(1);
    const event = await refusal(provider.stream(call(), () => {}));
    expect(event.toWire()).toMatchObject({ code: 'payload_too_large', details: { reason: 'upstream_body_too_large', limit: limits.eventBytes } });
    await expect.poll(() => server.abortedStreams, { timeout: 10_000 }).toBe(2);
    expect(server.requests).toHaveLength(2);
  });

  it('cancel mid-stream closes the upstream connection', async () => {
    const { server, provider } = await setup({ chunk_size: 1, chunk_delay_ms: 30, steps: [{ content: 'a reply long enough to cancel in the middle' }] });
    const ac = new AbortController();
    let seen = 0;
    const err = await refusal(
      provider.stream(call({ signal: ac.signal }), () => {
        if (++seen === 2) ac.abort();
      }),
    );
    expect(err.reason).toBe('cancelled');
    await expect.poll(() => server.abortedStreams, { timeout: 5000 }).toBe(1);
  });

  it('extra_args.model never reaches the upstream body; OpenAI-only args are refused, sampling args mapped', async () => {
    const { server, provider } = await setup({ steps: [{ content: 'ok' }] });
    expect((await refusal(provider.invoke(call({ extra_args: { model: 'claude-opus-4' } })))).code).toBe('invalid_argument');
    expect((await refusal(provider.invoke(call({ extra_args: { seed: 1 } })))).code).toBe('invalid_argument');
    expect(server.requests).toHaveLength(0);
    await provider.invoke(call({ extra_args: { temperature: 0.3, stop: 'END', max_tokens: 64, tool_choice: 'required' }, tools: TOOLS }));
    expect(server.requests[0]?.body).toMatchObject({
      model: 'claude-sonnet-4-5',
      temperature: 0.3,
      stop_sequences: ['END'],
      max_tokens: 64,
      tool_choice: { type: 'any' },
    });
  });

  it('a wrong key is a non-retryable 401 that never echoes the key', async () => {
    const { provider } = await setup({}, { api_key: 'sk-ant-wrong-777777' });
    const err = await refusal(provider.invoke(call()));
    expect(err.message).toContain('401 invalid api key');
    expect(err.retryable).toBe(false);
    expect(JSON.stringify(err.toWire())).not.toContain('sk-ant-wrong-777777');
  });
});
