// The bundled local agent with the other kinds of resource, through the built CLI against the fake model
// server, on one shared data dir: a tool of a real MCP server (@modelcontextprotocol/server-everything), a
// bound skill the model activates before running it in the box, and a knowledge-base entry put in front of
// the model's answer. Each run is checked in the reply, the requests the model got, and the run's audit.
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeScriptSchema } from '../../../src/runtime/models/fake-server-script.js';
import { startFakeModelServer, type FakeServer } from '../../../src/runtime/models/fake-server.js';
import { boxBackend } from '../../helpers/box.js';
import { withReason } from '../../helpers/skip.js';
import { completedTexts, list, parseLines, pick, REPO_ROOT, scenario, str, summaries, type Scenario } from './harness.js';

const KEY = 'sk-e2e-local-agent-resources';
const LOCAL_AGENT = 'plugin:langbot/local-agent/default';
const EVERYTHING = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const env = { LOCAL_AGENT_KEY: KEY };
const box = boxBackend();
let server: FakeServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

type ChatBody = { messages: Array<{ role: string; content?: string | null; tool_call_id?: string }>; tools?: Array<{ function: { name: string } }> };

function chats(s: FakeServer): ChatBody[] {
  return s.requests.filter((q) => q.path === '/v1/chat/completions').map((q) => q.body as ChatBody);
}

async function runAgent(s: Scenario, text: string, binding: Record<string, unknown>) {
  const bindingFile = await s.writeJson(`binding-${randomUUID()}.json`, { binding_id: `agent-${randomUUID()}`, runner_id: LOCAL_AGENT, ...binding });
  const conversation = `c-${randomUUID().slice(0, 8)}`;
  const event = await s.writeJson(`ev-${randomUUID()}.json`, {
    event_id: `ev-${randomUUID()}`,
    event_type: 'message.received',
    source: 'api',
    conversation_id: conversation,
    actor: { actor_type: 'user', actor_id: 'u1', actor_name: 'Ann' },
    input: { text, contents: [{ type: 'text', text }], attachments: [] },
    delivery: { surface: 'cli', supports_streaming: true },
  });
  const r = await s.lbot(['--json', '--verbose', 'run', '--event', event, '--binding', bindingFile], { env, timeoutMs: 90_000 });
  expect(r.exitCode, r.stdout + r.stderr).toBe(0);
  const runId = str(summaries(r.stdout)[0], 'run_id');
  const record = await s.json(['runs', 'show', runId]);
  expect(record).toMatchObject({ status: 'completed', runner_id: LOCAL_AGENT });
  const actions = list(record, 'api_calls').map((a) => `${String(pick(a, 'action'))}:${String(pick(a, 'decision'))}`);
  return { r, lines: parseLines(r.stdout), actions, conversation };
}

const model = { primary: 'gpt', fallbacks: [] };

describe('local agent runner with MCP tools, skills and knowledge bases (built CLI, fake model server)', () => {
  it.skipIf(!box.usable)(
    withReason('an MCP tool, an activated skill and a knowledge-base answer, each fed back to the model', !box.usable && box.reason),
    { timeout: 240_000 },
    async () => {
      // One fake model server serves the three runs in order: its steps are consumed one chat call at a time.
      server = await startFakeModelServer(
        FakeScriptSchema.parse({
          api_key: KEY,
          models: ['gpt-4o-mini'],
          steps: [
            // 1. MCP: the model calls the server's get-sum tool and answers from its result.
            { tool_calls: [{ id: 'call_sum', name: 'get-sum', arguments: { a: 40, b: 2 } }] },
            { content: 'The server says 42.' },
            // 2. Skill: activate, then run the skill's script in the box, then answer.
            { tool_calls: [{ id: 'call_activate', name: 'activate', arguments: { skill_name: 'hello-skill' } }] },
            { tool_calls: [{ id: 'call_run', name: 'exec', arguments: { command: 'sh /workspace/.skills/hello-skill/run.sh' } }] },
            { content: 'The skill said hello.' },
            // 3. Knowledge base: the retrieved entry is in the request; the model answers from it.
            { content: 'The harbour gate opens at 05:40 (from the harbour notes).' },
          ],
        }),
      );
      const s = await scenario();
      await s.writeConfig({
        models: [{ id: 'gpt', provider: 'openai', base_url: server.openaiBaseUrl, model: 'gpt-4o-mini', api_key_env: 'LOCAL_AGENT_KEY', max_retries: 0 }],
      });
      const added = await s.lbot(['mcp', 'add', 'everything', '--', process.execPath, EVERYTHING, 'stdio']);
      expect(added.exitCode, added.stderr).toBe(0);
      const installed = await s.lbot(['skill', 'install', path.join(REPO_ROOT, 'fixtures', 'skills', 'hello-skill.zip')]);
      expect(installed.exitCode, installed.stderr).toBe(0);
      const notes = path.join(s.root, 'harbour-notes.md');
      await writeFile(
        notes,
        '# Harbour notes\n\nThe harbour gate opens at 05:40 every morning and closes at 22:10.\n\n# Fish market\n\nThe fish market sells cod on Tuesdays.\n',
      );
      for (const args of [
        ['kb', 'create', 'harbour'],
        ['kb', 'add', 'harbour', notes],
      ]) {
        const r = await s.lbot(args, { env });
        expect(r.exitCode, r.stderr).toBe(0);
      }

      // 1. The MCP tool: offered under its own name, called through the host, its text fed back.
      const mcp = await runAgent(s, 'add 40 and 2 with the server', {
        runner_config: { model },
        resource_policy: { allowed_tool_names: ['get-sum'] },
      });
      const sumDone = mcp.lines.find((l) => l.type === 'tool.call.completed');
      expect(pick(sumDone, 'data.tool_name')).toBe('get-sum');
      expect(JSON.stringify(pick(sumDone, 'data.result'))).toContain('The sum of 40 and 2 is 42.');
      expect(completedTexts(mcp.r.stdout).at(-1)).toBe('The server says 42.');
      const [mcpFirst, mcpSecond] = chats(server).slice(0, 2);
      expect(mcpFirst?.tools?.map((t) => t.function.name)).toEqual(['get-sum']);
      const mcpResult = mcpSecond?.messages.find((m) => m.role === 'tool');
      expect(mcpResult?.tool_call_id).toBe('call_sum');
      expect(String(mcpResult?.content)).toContain('The sum of 40 and 2 is 42.');
      expect(mcp.actions).toEqual(expect.arrayContaining(['tools.get_detail:allowed', 'tools.call:allowed']));

      // 2. The skill: announced in the Agent Skills format, activated, then run in the box.
      const skill = await runAgent(s, 'say hello with the skill', {
        skills: ['hello-skill'],
        runner_config: { model },
        resource_policy: { allowed_tool_names: ['exec', 'activate'] },
      });
      const skillChats = chats(server).slice(2, 5);
      expect(skillChats).toHaveLength(3);
      const system = skillChats[0]?.messages.filter((m) => m.role === 'system').map((m) => String(m.content));
      expect(system?.join('\n')).toMatch(
        /<available_skills>[\s\S]*<name>hello-skill<\/name>[\s\S]*<description>Says hello<\/description>[\s\S]*<location>\/workspace\/\.skills\/hello-skill\/SKILL\.md<\/location>/,
      );
      expect(skillChats[0]?.tools?.map((t) => t.function.name).sort()).toEqual(['activate', 'exec']);
      const completedTools = skill.lines.filter((l) => l.type === 'tool.call.completed');
      expect(completedTools.map((l) => pick(l, 'data.tool_name'))).toEqual(['activate', 'exec']);
      expect(pick(completedTools[0], 'data.result')).toMatchObject({ activated: true, skill_name: 'hello-skill' });
      expect(pick(completedTools[1], 'data.result')).toMatchObject({ exit_code: 0, stdout: 'hello from hello-skill\n' });
      const runResult = skillChats[2]?.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'call_run');
      expect(String(runResult?.content)).toContain('hello from hello-skill');
      expect(completedTexts(skill.r.stdout).at(-1)).toBe('The skill said hello.');
      await s.lbot(['box', 'rm', `conversation_${skill.conversation}`]);

      // 3. The knowledge base: retrieved through the host and put around the user's message.
      const kb = await runAgent(s, 'when does the harbour gate open?', {
        runner_config: { model, 'knowledge-bases': ['harbour'] },
        resource_policy: { allowed_tool_names: [] },
      });
      expect(kb.actions).toContain('knowledge.retrieve:allowed');
      const kbChat = chats(server)[5];
      const user = kbChat?.messages.filter((m) => m.role === 'user').at(-1);
      expect(String(user?.content)).toMatch(
        /<context>\n\[1\] [\s\S]*05:40[\s\S]*<\/context>[\s\S]*<user_message>\nwhen does the harbour gate open\?\n<\/user_message>/,
      );
      expect(completedTexts(kb.r.stdout).at(-1)).toContain('05:40');
      expect(chats(server)).toHaveLength(6);
    },
  );
});
