// Sampling through the built CLI: an MCP server's sampling/createMessage is refused, with how to grant a
// model, unless the server is granted a configured model; then it is served by the host's model provider
// (here against the fake OpenAI-compatible upstream), with the grant's token cap.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeScriptSchema } from '../../../src/runtime/models/fake-server-script.js';
import { startFakeModelServer, type FakeServer } from '../../../src/runtime/models/fake-server.js';
import { REPO_ROOT } from '../../helpers/plugins.js';
import { LBOT_BIN } from '../../helpers/serve.js';

const SERVER = path.join(REPO_ROOT, 'fixtures', 'mcp', 'sampling.js');
const KEY = 'sk-sampling-test';
let fake: FakeServer;
let dataDir: string;

beforeAll(async () => {
  fake = await startFakeModelServer(FakeScriptSchema.parse({ api_key: KEY, models: ['gpt-4o-mini'], steps: [{ content: 'Paris' }] }));
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-mcp-sampling-'));
  const models = [{ id: 'm1', provider: 'openai', base_url: fake.openaiBaseUrl, model: 'gpt-4o-mini', api_key: KEY, max_retries: 0 }];
  await writeFile(path.join(dataDir, 'lbot.config.json'), JSON.stringify({ models }));
  for (const [name, grant] of [
    ['plain', []],
    ['granted', ['--sampling-model', 'm1']],
    ['dangling', ['--sampling-model', 'no-such-model']],
  ] as const) {
    const r = await lbot(['mcp', 'add', name, ...grant, '--', 'node', SERVER]);
    expect(r.exitCode, r.stderr).toBe(0);
  }
});

afterAll(async () => {
  await fake.close();
  await rm(dataDir, { recursive: true, force: true });
});

function lbot(args: string[]) {
  return execa(process.execPath, [LBOT_BIN, '--data-dir', dataDir, ...args], { reject: false, env: { NO_COLOR: '1' } });
}

describe('[sampling] sampling/createMessage from an MCP server', () => {
  it('is refused with how to grant a model when the server is granted none', async () => {
    const r = await lbot(['mcp', 'call', 'plain', 'ask', '--args', '{"question":"capital of France?"}']);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('lbot grants no model to MCP server plain for sampling');
    expect(r.stderr).toContain('--sampling-model');
    expect(fake.requests).toEqual([]);
  });

  it('is refused when the granted model is not configured', async () => {
    const r = await lbot(['mcp', 'call', 'dangling', 'ask', '--args', '{"question":"x"}']);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('granted model no-such-model for sampling, but no such llm model is configured');
    expect(fake.requests).toEqual([]);
  });

  it('is served by the granted model through the host model provider, capped at the grant', async () => {
    const r = await lbot(['--json', 'mcp', 'call', 'granted', 'ask', '--args', '{"question":"capital of France?"}']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ result: [{ type: 'text', text: 'gpt-4o-mini: Paris' }] });
    const chat = fake.requests.filter((q) => q.path === '/v1/chat/completions');
    expect(chat).toHaveLength(1);
    expect(chat[0]?.body).toMatchObject({
      model: 'gpt-4o-mini',
      // The server asked for 50,000 tokens; the grant's max_tokens (1024) bounds it.
      max_tokens: 1024,
      messages: [
        { role: 'system', content: 'Answer in one word.' },
        { role: 'user', content: 'capital of France?' },
      ],
    });
  });
});
