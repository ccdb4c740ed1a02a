// A LangBot SDK plugin (fixtures/runners/langbot-wire: a strict stdlib stand-in for the SDK's runtime)
// through the built CLI: handshake, junk on stdout, chunked frames both ways with multi-byte text,
// streamed run_agent, proxy calls authorized and audited, cancel through run_get, and the failure modes.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/plugins.js';
import { withReason } from '../../helpers/skip.js';
import { completedTexts, errorOf, firstLine, scenario, str, summaries, type Scenario } from './harness.js';

const RUNNER = 'plugin:lbot-fixtures/wire-agent/default';
const FIXTURE = 'langbot-wire';
const hasPython = (await execa('python3', ['--version'], { reject: false })).exitCode === 0;

async function wire(opts: { mode?: string } = {}): Promise<Scenario> {
  const s = await scenario([FIXTURE]);
  if (opts.mode) await writeFile(path.join(s.plugins.dir(FIXTURE), 'wire_mode'), opts.mode);
  await s.writeConfig({
    models: [
      { id: 'm-fake', provider: 'fake', reply: 'FAKE_PONG', tokenizer: 'o200k_base' },
      { id: 'm-other', provider: 'fake', reply: 'OTHER', tokenizer: 'o200k_base' },
    ],
  });
  return s;
}

async function say(s: Scenario, text: string, extra: { env?: Record<string, string>; args?: string[] } = {}) {
  const event = await s.writeJson(`ev-${Math.random().toString(36).slice(2)}.json`, {
    event_id: `ev-${Math.random().toString(36).slice(2)}`,
    event_type: 'message.received',
    source: 'pipeline_adapter',
    event_time: 1767225600.75,
    conversation_id: 'c1',
    actor: { actor_type: 'user', actor_id: 'u1', actor_name: 'Ann' },
    input: { text, contents: [{ type: 'text', text }], attachments: [] },
    delivery: { surface: 'cli', supports_streaming: true },
  });
  return s.run([], { json: true, runner: RUNNER, event, config: { model: { primary: 'm-fake', fallbacks: [] } }, ...extra });
}

describe.skipIf(!hasPython)(withReason('LangBot wire through lbot run', !hasPython && 'python3 is missing'), () => {
  it('streams deltas and a reply; context translated (pipeline_adapter, fractional event_time) and the plugin dir untouched', async () => {
    const s = await wire();
    const r = await say(s, 'echo 你好, wire');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(completedTexts(r.stdout)).toEqual(['echo 你好, wire']);
    expect(r.stdout).toContain('"type":"message.delta"');
    expect(summaries(r.stdout)[0]).toMatchObject({ runner_id: RUNNER, status: 'completed' });
    const { readdir } = await import('node:fs/promises');
    expect((await readdir(s.plugins.dir(FIXTURE))).sort()).toEqual([
      'SOURCES.md',
      'components',
      'langbot_plugin',
      'langbot_plugin-0.5.3.dist-info',
      'main.py',
      'manifest.yaml',
    ]);
  });

  it('chunks a 60 KB multi-byte message both ways by UTF-8 byte offsets, and joins a line split mid-character', async () => {
    const s = await wire();
    const text = `echo ${'é大🙂'.repeat(6000)}`;
    const r = await say(s, text);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(completedTexts(r.stdout)).toEqual([text]);
    const big = await say(s, 'big');
    expect(big.exitCode, big.stderr).toBe(0);
    expect(completedTexts(big.stdout)).toEqual(['大'.repeat(20000) + '!']);
    const split = await say(s, 'split');
    expect(split.exitCode, split.stderr).toBe(0);
    expect(completedTexts(split.stdout)).toEqual(['é']);
  });

  it('state, count_tokens and a streamed model call go through the proxy and are audited; local actions answer', async () => {
    const s = await wire();
    const state = await say(s, 'state BLUE');
    expect(state.exitCode, state.stderr).toBe(0);
    expect(completedTexts(state.stdout)).toEqual(['stored BLUE']);
    const tokens = await say(s, 'tokens hello world');
    expect(tokens.exitCode, tokens.stderr).toBe(0);
    expect(completedTexts(tokens.stdout)[0]).toMatch(/^tokens [1-9]\d*$/);
    const llm = await say(s, 'llm hi');
    expect(llm.exitCode, llm.stderr).toBe(0);
    expect(completedTexts(llm.stdout)[0]).toMatch(/^llm FAKE_PONG tools=.* chunks=\d+$/);
    const version = await say(s, 'version');
    expect(completedTexts(version.stdout)).toEqual(['version 4.11.0 steering=0']);
    const runId = str(summaries(tokens.stdout)[0], 'run_id');
    const record = JSON.stringify(await s.json(['runs', 'show', runId]));
    expect(record).toContain('models.count_tokens');
  });

  it('refuses an ungranted model with unauthorized and an unknown action with unsupported, and the run goes on', async () => {
    const s = await wire();
    const ungranted = await say(s, 'ungranted m-other');
    expect(ungranted.exitCode, ungranted.stderr).toBe(0);
    expect(completedTexts(ungranted.stdout)).toEqual(['refused unauthorized']);
    const unsupported = await say(s, 'unsupported');
    expect(unsupported.exitCode, unsupported.stderr).toBe(0);
    expect(completedTexts(unsupported.stdout)).toEqual(['unsupported unsupported']);
  });

  it('cancel (SIGINT) reaches the runner through run_get well inside a long grace', async () => {
    const s = await wire();
    const event = await s.writeJson('cancel.json', {
      event_id: 'ev-cancel',
      event_type: 'message.received',
      source: 'api',
      input: { text: 'cancel', contents: [], attachments: [] },
      delivery: { surface: 'cli', supports_streaming: true },
    });
    const args = await s.runArgs([], { json: true, runner: RUNNER, event });
    const child = s.spawn(args, { env: { LBOT__RUNS__CANCEL_GRACE_MS: '60000' } });
    await firstLine(child, (l) => l.includes('working'));
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, r.stderr).toBe(130);
    const runId = str(summaries(r.stdout)[0], 'run_id');
    const record = await s.json(['runs', 'show', runId]);
    expect(record).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
    // The runner saw the flag and answered run.failed/cancelled itself: no kill was needed.
    expect(JSON.stringify(record)).toContain('"code":"cancelled"');
  });

  it('a crash mid-stream is runner.crashed with the stderr tail; an oversized line is runner.protocol_error', async () => {
    const s = await wire();
    const crash = await say(s, 'crash');
    expect(crash.exitCode).not.toBe(0);
    const err = errorOf(crash.stdout);
    expect(err?.code).toBe('runner.crashed');
    expect(String(err?.message)).toContain('crashing mid-stream on request');
    const oversize = await say(s, 'oversize');
    expect(errorOf(oversize.stdout)?.code).toBe('runner.protocol_error');
    expect(String(errorOf(oversize.stdout)?.message)).toMatch(/longer than 131072 bytes/);
  });

  it('call_tool reaches a granted MCP tool, and history_page pages the conversation so far', async () => {
    const s = await wire();
    await s.writeConfig({
      models: [{ id: 'm-fake', provider: 'fake', reply: 'FAKE_PONG', tokenizer: 'o200k_base' }],
      mcp: { servers: [{ name: 'echo', command: [process.execPath, path.join(REPO_ROOT, 'fixtures', 'mcp', 'echo.js')] }] },
    });
    const binding = await s.writeJson('binding.json', { binding_id: 'b1', runner_id: RUNNER, resource_policy: { allowed_tool_names: ['echo'] } });
    const tool = await say(s, 'tool echo {"text":"héllo"}', { args: ['--binding', binding] });
    expect(tool.exitCode, tool.stderr).toBe(0);
    expect(completedTexts(tool.stdout)).toEqual([expect.stringMatching(/^tool .*héllo/)]);
    const history = await say(s, 'history');
    expect(history.exitCode, history.stderr).toBe(0);
    // The tool run's message and reply, then this run's message (Python prints its bool as False).
    expect(completedTexts(history.stdout)).toEqual(['history 3 has_more=False']);
  });

  it('langbot.python in the config chooses the Python the plugin runs on', async () => {
    const s = await wire();
    await s.writeConfig({
      langbot: { python: '/nonexistent/python3' },
      models: [{ id: 'm-fake', provider: 'fake', reply: 'FAKE_PONG', tokenizer: 'o200k_base' }],
    });
    const r = await say(s, 'echo x');
    expect(r.exitCode).not.toBe(0);
    expect(errorOf(r.stdout)?.code).toBe('runner.start_failed');
    expect(String(errorOf(r.stdout)?.message)).toMatch(/could not run the Python for LangBot plugins \(\/nonexistent\/python3\)/);
  });

  it('a plugin that registers as someone else is refused', async () => {
    const s = await wire({ mode: 'wrong-identity' });
    const r = await say(s, 'echo x');
    expect(errorOf(r.stdout)?.code).toBe('runner.protocol_error');
    expect(String(errorOf(r.stdout)?.message)).toMatch(/registered as someone-else\/wire-agent/);
  });
});
