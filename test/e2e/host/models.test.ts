// Real runs against real provider code: a fixture runner calls models.* through the SDK client, the
// host authorizes and audits each call and the provider talks to the fake upstream over loopback;
// plus `lbot model add|list|show|test|rm|fake-server` from the built CLI.
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeScriptSchema, type FakeScriptInput } from '../../../src/runtime/models/fake-server-script.js';
import { startFakeModelServer, type FakeServer } from '../../../src/runtime/models/fake-server.js';
import { firstLine, LBOT_BIN, list, reports, scenario, str, summaries, type Scenario } from './harness.js';

const KEY = 'sk-e2e-KEY-0123456789';
const MODEL_CALLS = 'plugin:acme/model-calls/default';
let servers: FakeServer[] = [];

afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function fake(script: FakeScriptInput = {}): Promise<FakeServer> {
  const server = await startFakeModelServer(FakeScriptSchema.parse({ api_key: KEY, models: ['gpt-4o-mini', 'bge-reranker'], ...script }));
  servers.push(server);
  return server;
}

async function withModels(server: FakeServer): Promise<Scenario> {
  const s = await scenario(['model-calls']);
  await s.writeConfig({
    models: [
      { id: 'gpt', provider: 'openai', base_url: server.openaiBaseUrl, model: 'gpt-4o-mini', api_key_env: 'E2E_MODEL_KEY', max_retries: 0 },
      {
        id: 'rr',
        provider: 'openai',
        model_type: 'rerank',
        base_url: server.openaiBaseUrl,
        model: 'bge-reranker',
        api_key_env: 'E2E_MODEL_KEY',
        max_retries: 0,
      },
    ],
  });
  return s;
}

const env = { E2E_MODEL_KEY: KEY };

describe('model methods in real runs', () => {
  it('count_tokens, embed, rerank, invoke and stream through the SDK client reach the upstream and are audited', async () => {
    const server = await fake({ steps: [{ content: 'pong' }, { content: 'streamed', tool_calls: [{ id: 'call_1', name: 'lookup', arguments: { q: 'x' } }] }] });
    const s = await withModels(server);
    const messages = [{ role: 'user', content: 'hello world' }];
    const calls = [
      { fn: 'countTokens', args: { model_id: 'gpt', messages: [], text: 'hello world' } },
      { fn: 'embed', args: { model_id: 'gpt', input: ['a', 'b'] } },
      { fn: 'rerank', args: { model_id: 'rr', query: 'red apple', documents: ['blue sky', 'red apple pie'], top_k: 1 } },
      { fn: 'invoke', args: { model_id: 'gpt', messages } },
      {
        fn: 'stream',
        args: {
          model_id: 'gpt',
          messages,
          tools: [{ name: 'lookup', description: 'Look up', parameters: { type: 'object', properties: { q: { type: 'string' } } } }],
        },
      },
    ];
    const r = await s.run([], { json: true, runner: MODEL_CALLS, config: { model: 'gpt', reranker: 'rr', calls }, env });
    expect(r.exitCode, r.stderr).toBe(0);
    const [count, embed, rerank, invoke, stream] = reports(r.stdout);
    expect(count).toMatchObject({ ok: true, result: { tokens: 2, context_window: 128000, tokenizer: 'o200k_base' } });
    expect(embed).toMatchObject({ ok: true, result: { model: 'gpt-4o-mini' } });
    expect((embed as { result: { embeddings: unknown[] } }).result.embeddings).toHaveLength(2);
    expect(rerank).toEqual({ ok: true, fn: 'rerank', result: [{ index: 1, relevance_score: 1 }] });
    expect(invoke).toMatchObject({ ok: true, result: { role: 'assistant', content: 'pong' } });
    expect(stream).toMatchObject({
      ok: true,
      result: { content: 'streamed', tool_calls: [{ id: 'call_1', function: { name: 'lookup', arguments: '{"q":"x"}' } }] },
    });
    expect(server.requests.map((q) => q.path)).toEqual(['/v1/embeddings', '/v1/rerank', '/v1/chat/completions', '/v1/chat/completions']);
    const audit = list(await s.json(['runs', 'show', str(summaries(r.stdout)[0], 'run_id')]), 'api_calls');
    expect(audit.map((a) => [(a as { action: string }).action, (a as { decision: string }).decision])).toEqual([
      ['models.count_tokens', 'allowed'],
      ['models.embed', 'allowed'],
      ['models.rerank', 'allowed'],
      ['models.invoke', 'allowed'],
      ['models.stream', 'allowed'],
    ]);
  });

  it('invokeReply and streamReply answer the usage, finish reason and upstream model with the message', async () => {
    const server = await fake({
      steps: [{ content: 'one two three' }, { content: 'streamed', tool_calls: [{ id: 'call_1', name: 'lookup', arguments: { q: 'x' } }] }],
    });
    const s = await withModels(server);
    const messages = [{ role: 'user', content: 'hello world' }];
    const tools = [{ name: 'lookup', description: 'Look up', parameters: { type: 'object', properties: { q: { type: 'string' } } } }];
    const calls = [
      { fn: 'invokeReply', args: { model_id: 'gpt', messages } },
      { fn: 'streamReply', args: { model_id: 'gpt', messages, tools } },
    ];
    const r = await s.run([], { json: true, runner: MODEL_CALLS, config: { model: 'gpt', calls }, env });
    expect(r.exitCode, r.stderr).toBe(0);
    const [invoke, stream] = reports(r.stdout);
    // The fake counts words: 2 prompt words, 3 reply words; a tool call counts 1.
    expect(invoke).toEqual({
      ok: true,
      fn: 'invokeReply',
      result: {
        message: expect.objectContaining({ role: 'assistant', content: 'one two three' }),
        usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
        finish_reason: 'stop',
        model: 'gpt-4o-mini',
      },
    });
    expect(stream).toMatchObject({
      ok: true,
      result: {
        message: { content: 'streamed', tool_calls: [{ id: 'call_1', function: { name: 'lookup', arguments: '{"q":"x"}' } }] },
        usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 },
        finish_reason: 'tool_calls',
        model: 'gpt-4o-mini',
      },
    });
  });

  it("a runner's extra_args.model is refused invalid_argument, audited, and never reaches the upstream", async () => {
    const server = await fake({ steps: [{ content: 'ok' }] });
    const s = await withModels(server);
    const calls = [
      { fn: 'invoke', args: { model_id: 'gpt', messages: [{ role: 'user', content: 'hi' }], extra_args: { model: 'gpt-5-pro' } } },
      { fn: 'invoke', args: { model_id: 'gpt', messages: [{ role: 'user', content: 'hi' }], extra_args: { temperature: 0.2 } } },
    ];
    const r = await s.run([], { json: true, runner: MODEL_CALLS, config: { model: 'gpt', calls }, env });
    expect(r.exitCode, r.stderr).toBe(0);
    const [refused, allowed] = reports(r.stdout);
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_argument', details: { reason: 'extra_arg_not_allowed', key: 'model' } } });
    expect(allowed).toMatchObject({ ok: true });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.body).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.2 });
    const audit = list(await s.json(['runs', 'show', str(summaries(r.stdout)[0], 'run_id')]), 'api_calls');
    expect(audit[0]).toMatchObject({ action: 'models.invoke', resource: 'gpt', decision: 'denied', code: 'invalid_argument' });
  });
});

describe('lbot model', () => {
  it('add … && test … works end to end against the fake server; list and show mask the key', async () => {
    const server = await fake({ steps: [{ content: 'pong' }, { content: '1 2 3' }, { tool_calls: [{ name: 'get_time', arguments: { tz: 'UTC' } }] }] });
    const s = await scenario([]);
    const add = await s.lbot([
      'model',
      'add',
      'gpt',
      '--provider',
      'openai',
      '--base-url',
      server.openaiBaseUrl,
      '--model',
      'gpt-4o-mini',
      '--api-key-env',
      'E2E_MODEL_KEY',
    ]);
    expect(add.exitCode, add.stderr).toBe(0);
    const test = await s.lbot(['--json', 'model', 'test', 'gpt'], { env });
    expect(test.exitCode, test.stderr).toBe(0);
    const result = JSON.parse(test.stdout) as Record<string, unknown>;
    expect(result).toMatchObject({
      name: 'gpt',
      ok: true,
      upstream_model: 'gpt-4o-mini',
      reply: 'pong',
      streaming: { ok: true },
      tool_calls: { supported: true, ok: true },
    });
    expect(typeof result.latency_ms).toBe('number');
    expect(result.usage).toMatchObject({ total_tokens: expect.any(Number) });
    const text = await s.lbot(['model', 'test', 'gpt'], { env });
    expect(text.stdout).toContain('upstream model: ');

    const noKey = await s.lbot(['--json', 'model', 'test', 'gpt'], { env: { E2E_MODEL_KEY: undefined } });
    expect(noKey.exitCode).toBe(6);
    expect(JSON.parse(noKey.stdout)).toMatchObject({ ok: false, error: expect.stringContaining('E2E_MODEL_KEY') });

    const stored = await s.lbot(
      ['model', 'add', 'kept', '--provider', 'anthropic', '--base-url', server.anthropicBaseUrl, '--model', 'claude-x', '--api-key-stdin'],
      { input: `${KEY}\n` },
    );
    expect(stored.exitCode, stored.stderr).toBe(0);
    const configFile = path.join(s.dataDir, 'lbot.config.json');
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
    expect(await readFile(configFile, 'utf8')).toContain(KEY);
    const listed = await s.lbot(['--json', 'model', 'list']);
    const shown = await s.lbot(['--json', 'model', 'show', 'kept']);
    for (const out of [listed.stdout, shown.stdout, stored.stdout, test.stdout]) expect(out).not.toContain(KEY);
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { id: 'gpt', key: 'env:E2E_MODEL_KEY' },
      { id: 'kept', provider: 'anthropic', key: 'stored' },
    ]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ model: { api_key: '****' } });

    expect((await s.lbot(['model', 'add', 'gpt', '--provider', 'fake'])).exitCode).toBe(2);
    const rm = await s.lbot(['--json', 'model', 'rm', 'gpt']);
    expect(JSON.parse(rm.stdout)).toEqual({ ok: true, removed: 'gpt' });
    expect((await s.lbot(['model', 'show', 'gpt'])).exitCode).toBe(3);
  });

  it('fake-server serves a script from the CLI until stopped', async () => {
    const s = await scenario([]);
    const script = await s.writeJson('script.json', { api_key: KEY, steps: [{ content: 'from the cli server' }] });
    const child = s.spawn(['--json', 'model', 'fake-server', '--port', '0', '--script', script]);
    const line = JSON.parse(await firstLine(child, (l) => l.startsWith('{'))) as { openai_base_url: string };
    const res = await fetch(`${line.openai_base_url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'any', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(await res.json()).toMatchObject({ choices: [{ message: { content: 'from the cli server' } }] });
    child.kill('SIGTERM');
    expect((await child).exitCode).toBe(0);
    const bad = await execa(process.execPath, [LBOT_BIN, 'model', 'fake-server', '--script', await s.writeJson('bad.json', { steps: [{ nope: 1 }] })], {
      reject: false,
    });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('steps.0');
  });
});
