// The bundled local agent through the built CLI against the fake model server: "what is 6*7?" makes the
// model ask for exec, the runner runs it in the box and feeds the result back, and the reply says 42;
// the transcript, the audit, the event log and the box session show each step.
import { randomUUID } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeScriptSchema, type FakeScriptInput } from '../../../src/runtime/models/fake-server-script.js';
import { startFakeModelServer, type FakeServer } from '../../../src/runtime/models/fake-server.js';
import { boxBackend } from '../../helpers/box.js';
import { withReason } from '../../helpers/skip.js';
import { completedTexts, list, parseLines, pick, scenario, str, summaries, type Scenario } from './harness.js';

const KEY = 'sk-e2e-local-agent-KEY';
const LOCAL_AGENT = 'plugin:langbot/local-agent/default';
const env = { LOCAL_AGENT_KEY: KEY };
const box = boxBackend();
let servers: FakeServer[] = [];

afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function fake(script: FakeScriptInput): Promise<FakeServer> {
  const server = await startFakeModelServer(FakeScriptSchema.parse({ api_key: KEY, models: ['gpt-4o-mini'], ...script }));
  servers.push(server);
  return server;
}

async function agentScenario(server: FakeServer, runner_config: Record<string, unknown> = {}, tools: string[] = ['exec']) {
  const s = await scenario();
  await s.writeConfig({
    models: [{ id: 'gpt', provider: 'openai', base_url: server.openaiBaseUrl, model: 'gpt-4o-mini', api_key_env: 'LOCAL_AGENT_KEY', max_retries: 0 }],
  });
  const binding = await s.writeJson(`binding-${randomUUID()}.json`, {
    binding_id: 'agent',
    runner_id: LOCAL_AGENT,
    runner_config: { model: { primary: 'gpt', fallbacks: [] }, ...runner_config },
    resource_policy: { allowed_tool_names: tools },
  });
  const event = await s.writeJson('ev.json', {
    event_id: `ev-${randomUUID()}`,
    event_type: 'message.received',
    source: 'api',
    conversation_id: 'c42',
    actor: { actor_type: 'user', actor_id: 'u1', actor_name: 'Ann' },
    input: { text: 'what is 6*7?', contents: [{ type: 'text', text: 'what is 6*7?' }], attachments: [] },
    delivery: { surface: 'cli', supports_streaming: true },
  });
  const argv = (extra: string[] = []) => [
    '--data-dir',
    s.dataDir,
    '--plugins',
    s.plugins.pluginsDir,
    '--json',
    '--verbose',
    'run',
    '--event',
    event,
    '--binding',
    binding,
    ...extra,
  ];
  const run = Object.assign((extra: string[] = []) => s.lbot(argv(extra), { env, globals: false }), { args: argv });
  return { s, run };
}

const EXEC_42 = { id: 'call_exec42', name: 'exec', arguments: { command: "python3 -c 'print(6*7)'" } };

describe('local agent runner (built CLI, fake model server)', () => {
  it('is found without configuration under its id', async () => {
    const s: Scenario = await scenario();
    const runners = await s.jsonList(['runner', 'list']);
    expect(runners.map((r) => r.id)).toContain(LOCAL_AGENT);
  });

  it.skipIf(!box.usable)(withReason('what is 6*7: exec in the box, the result fed back, the reply says 42', !box.usable && box.reason), async () => {
    const server = await fake({ steps: [{ content: 'Let me compute that.', tool_calls: [EXEC_42] }, { content: '6*7 = 42' }] });
    const { s, run } = await agentScenario(server);
    const r = await run();
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = parseLines(r.stdout);
    const tool = lines.find((l) => l.type === 'tool.call.completed');
    expect(pick(tool, 'data.tool_name')).toBe('exec');
    expect(String(pick(tool, 'data.result.stdout')).trim()).toBe('42');
    expect(completedTexts(r.stdout).at(-1)).toContain('42');
    expect(lines.some((l) => l.type === 'message.delta')).toBe(true);

    // The model got the tool result back, answering its call id, and was offered exec only.
    const chats = server.requests.filter((q) => q.path === '/v1/chat/completions');
    expect(chats).toHaveLength(2);
    const sent = (chats[1]?.body as { messages: Array<{ role: string; tool_call_id?: string; content?: string }> }).messages;
    const toolMessage = sent.find((m) => m.role === 'tool');
    expect(toolMessage?.tool_call_id).toBe('call_exec42');
    expect(JSON.parse(String(toolMessage?.content))).toMatchObject({ stdout: '42\n', exit_code: 0, session_id: 'conversation_c42' });
    const offered = (chats[0]?.body as { tools?: Array<{ function: { name: string } }> }).tools?.map((t) => t.function.name);
    expect(offered).toEqual(['exec']);

    // The audit has each host call, the transcript the question and both answers, the event log the tool call.
    const runId = str(summaries(r.stdout)[0], 'run_id');
    const record = await s.json(['runs', 'show', runId]);
    expect(record).toMatchObject({ status: 'completed', runner_id: LOCAL_AGENT });
    const actions = list(record, 'api_calls').map((a) => `${String(pick(a, 'action'))}:${String(pick(a, 'decision'))}`);
    expect(actions).toEqual(expect.arrayContaining(['models.count_tokens:allowed', 'tools.get_detail:allowed', 'models.stream:allowed', 'tools.call:allowed']));
    expect(actions.filter((a) => a === 'models.stream:allowed')).toHaveLength(2);
    const transcript = list(await s.page(['transcript', 'page', '--conversation', 'c42']), 'items').map(
      (i) => `${String(pick(i, 'role'))}: ${String(pick(i, 'content'))}`,
    );
    expect(transcript).toEqual(['user: what is 6*7?', 'assistant: Let me compute that.', 'assistant: 6*7 = 42']);
    const events = JSON.stringify(await s.page(['events', 'list']));
    expect(events).toContain('tool.call.completed');
    const sessions = await s.json<unknown[]>(['box', 'sessions']);
    expect(JSON.stringify(sessions)).toContain('conversation_c42');
    await s.lbot(['box', 'rm', 'conversation_c42']);
  });

  it.skipIf(!box.usable)(
    withReason('a cassette of the 42 run replays identically in a fresh data dir without the model server', !box.usable && box.reason),
    async () => {
      const server = await fake({ steps: [{ content: 'Let me compute that.', tool_calls: [EXEC_42] }, { content: '6*7 = 42' }] });
      const { s, run } = await agentScenario(server);
      const cassette = path.join(s.root, 'tapes', 'six-times-seven.json');
      const rec = await run(['--record', cassette]);
      expect(rec.exitCode, rec.stderr).toBe(0);
      await s.lbot(['box', 'rm', 'conversation_c42']);
      const tape = await readFile(cassette, 'utf8');
      expect(tape).not.toContain(KEY);
      await server.close();
      servers = servers.filter((x) => x !== server);

      // A fresh data dir: no model config, no box session, and the model server is gone.
      const fresh = path.join(s.root, 'fresh');
      await mkdir(fresh);
      const args = run.args(['--replay', cassette, '--check']).map((a) => (a === s.dataDir ? fresh : a));
      const replay = await s.lbot(args, { globals: false });
      expect(replay.exitCode, replay.stdout + replay.stderr).toBe(0);
      expect(completedTexts(replay.stdout)).toEqual(completedTexts(rec.stdout));
      expect(completedTexts(replay.stdout).at(-1)).toContain('42');
      const toolResult = (stdout: string) => parseLines(stdout).find((l) => l.type === 'tool.call.completed');
      expect(pick(toolResult(replay.stdout), 'data.result')).toEqual(pick(toolResult(rec.stdout), 'data.result'));
      expect(summaries(replay.stdout)[0]).toMatchObject({ status: 'completed' });
      const sessions = await s.lbot(['--data-dir', fresh, '--json', 'box', 'sessions'], { globals: false });
      expect(sessions.stdout).not.toContain('conversation_c42');
    },
  );

  it('the iteration cap ends the run as completed with the limit message', async () => {
    const forever = { tool_calls: [{ name: 'exec', arguments: { command: 'true' } }] };
    const server = await fake({ steps: [forever, forever, forever] });
    const { run } = await agentScenario(server, { 'max-tool-iterations': 1 }, []);
    const r = await run();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(completedTexts(r.stdout).at(-1)).toContain('limit of 1 tool-call rounds');
    expect(summaries(r.stdout)[0]).toMatchObject({ status: 'completed', error: null });
    // Nothing was granted, so nothing was offered and the call was answered without reaching the host.
    const chats = server.requests.filter((q) => q.path === '/v1/chat/completions');
    expect((chats[0]?.body as { tools?: unknown[] }).tools ?? []).toEqual([]);
    expect(JSON.stringify(chats[1]?.body)).toContain('is not available in this run');
  });
});
