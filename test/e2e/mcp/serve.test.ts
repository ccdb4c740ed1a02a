// [serve] MCP scenarios against a real `lbot serve` process: AC-156 (a server dies after connecting),
// AC-158 (a server dies during a tool call), AC-159 (remove a server), and the MCP bridge: an SDK client
// talking to `lbot mcp bridge` reads the current event and history during a run, is refused an ungranted
// tool, and is refused once the run has ended.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempPlugins, FIXTURE_EVENTS, REPO_ROOT, type TempPlugins } from '../../helpers/plugins.js';
import { LBOT_BIN, startServe, type ServeProcess } from '../../helpers/serve.js';

const SCRIPTED = 'plugin:acme/scripted/default';
const FIXTURES = path.join(REPO_ROOT, 'fixtures', 'mcp');
const emit = (type: string, data: Record<string, unknown> = {}) => ({ emit: { type, data } });
const say = (text: string) => emit('message.completed', { message: { role: 'assistant', content: text } });
const done = () => emit('run.completed');
const api = (action: string, args: Record<string, unknown>) => ({ api: { action, args }, report: true });

type Fixture = { dataDir: string; plugins: TempPlugins; serve?: ServeProcess; clients: Client[] };
const open: Fixture[] = [];

afterEach(async () => {
  for (const f of open.splice(0)) {
    for (const c of f.clients) await c.close().catch(() => undefined);
    await f.serve?.stop('SIGTERM').catch(() => undefined);
    await rm(f.dataDir, { recursive: true, force: true });
    await f.plugins.cleanup();
  }
});

async function setup(servers: Array<Record<string, unknown>>): Promise<Fixture & { serve: ServeProcess }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-mcp-serve-'));
  const plugins = await createTempPlugins(['scripted']);
  await writeFile(path.join(dataDir, 'lbot.config.json'), JSON.stringify({ mcp: { servers } }));
  const f: Fixture = { dataDir, plugins, clients: [] };
  open.push(f);
  const serve = await startServe({ dataDir, pluginsDir: plugins.pluginsDir });
  f.serve = serve;
  return { ...f, serve };
}

async function lbot(f: Fixture, args: string[], env: Record<string, string> = {}) {
  return execa(process.execPath, [LBOT_BIN, '--data-dir', f.dataDir, ...args], { reject: false, env });
}

async function mcpList(f: Fixture): Promise<Array<Record<string, unknown>>> {
  const r = await lbot(f, ['--json', 'mcp', 'list']);
  return JSON.parse(r.stdout) as Array<Record<string, unknown>>;
}

async function poll<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs: number): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Processes whose command line contains `needle` (read from /proc, so no pgrep is needed). */
function processesWith(needle: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(needle)) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

const event = async () => JSON.parse(await readFile(path.join(FIXTURE_EVENTS, 'msg.json'), 'utf8')) as Record<string, unknown>;
const binding = (allowed: string[]) => ({ binding_id: 'b-mcp', runner_id: SCRIPTED, resource_policy: { allowed_tool_names: allowed } });

async function startRun(f: Fixture & { serve: ServeProcess }, script: unknown[], allowed: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const r = await f.serve.request('POST', '/v1/runs', { event: await event(), binding: binding(allowed), config: { script, ...extra } });
  expect(r.status, r.text).toBe(202);
  return String((r.json as { run_id: string }).run_id);
}

/** The delivered message texts of a run so far. */
async function texts(f: Fixture & { serve: ServeProcess }, runId: string): Promise<string[]> {
  const r = await f.serve.request('GET', `/v1/runs/${runId}`);
  const results = (r.json as { results?: Array<{ data?: { message?: { content?: unknown } } }> }).results ?? [];
  return results.map((x) => String(x.data?.message?.content ?? ''));
}

describe('[serve] MCP servers under lbot serve', () => {
  it('AC-156 a server that dies after connecting shows error/runtime, then reconnects by the retry policy', async () => {
    const f = await setup([{ name: 'dies', command: ['node', path.join(FIXTURES, 'die-after.js')], env: { DIE_AFTER_MS: '3000' } }]);
    const seen = await poll(
      () => mcpList(f),
      (l) => l[0]?.status === 'error' && l[0]?.error_phase === 'runtime',
      20_000,
    );
    expect(seen[0]).toMatchObject({ name: 'dies', status: 'error', error_phase: 'runtime' });
    expect(seen[0]?.host_pid).toEqual(expect.any(Number));
    const later = await poll(
      () => mcpList(f),
      (l) => Number(l[0]?.retry_count) >= 2,
      20_000,
    );
    expect(Number(later[0]?.retry_count)).toBeGreaterThanOrEqual(2);
  });

  it('AC-158 a server killed during a tool call: the runner gets runtime_error (phase tool_call) and the run completes', async () => {
    const f = await setup([{ name: 'echo', command: ['node', path.join(FIXTURES, 'echo.js')] }]);
    const connected = await poll(
      () => mcpList(f),
      (l) => l[0]?.status === 'connected',
      15_000,
    );
    const pid = Number(connected[0]?.pid);
    expect(pid).toBeGreaterThan(0);
    const runId = await startRun(f, [api('tools.call', { tool_name: 'slow', parameters: { ms: 60_000 } }), say('after'), done()], ['slow']);
    await new Promise((r) => setTimeout(r, 1000));
    process.kill(-pid, 'SIGKILL');
    const run = await f.serve.waitRun(runId, 15_000);
    expect(run.status).toBe('completed');
    const [report] = await texts(f, runId);
    expect(JSON.parse(String(report))).toMatchObject({ ok: false, error: { code: 'runtime_error', details: { phase: 'tool_call' } } });
  });

  it('a server added while serve runs with none is started, and new runs list its tools', async () => {
    const tag = `lbot-test-${randomUUID()}`;
    const f = await setup([]);
    // With no server configured, serve has not loaded the MCP client: runs have no MCP tools.
    const before = await startRun(f, [{ dump_context: true }, done()], ['echo']);
    await f.serve.waitRun(before);
    expect((JSON.parse(String((await texts(f, before))[0])) as { resources: { tools: unknown[] } }).resources.tools).toEqual([]);
    expect((await lbot(f, ['mcp', 'add', 'echo', '--', 'node', path.join(FIXTURES, 'echo.js'), tag])).exitCode).toBe(0);
    const connected = await poll(
      () => mcpList(f),
      (l) => l[0]?.status === 'connected' && l[0]?.host_pid !== undefined,
      15_000,
    );
    expect(connected[0]).toMatchObject({ name: 'echo', status: 'connected' });
    expect(processesWith(tag)).not.toEqual([]);
    const after = await startRun(f, [{ dump_context: true }, done()], ['echo']);
    await f.serve.waitRun(after);
    const tools = (JSON.parse(String((await texts(f, after))[0])) as { resources: { tools: Array<{ tool_name: string }> } }).resources.tools;
    expect(tools.map((t) => t.tool_name)).toEqual(['echo']);
  });

  it('AC-159 remove a server: its process is gone within 5 s and new runs no longer list its tools', async () => {
    const tag = `lbot-test-${randomUUID()}`;
    const kept = `lbot-test-${randomUUID()}`;
    const f = await setup([
      { name: 'echo', command: ['node', path.join(FIXTURES, 'echo.js'), tag] },
      { name: 'kept', command: ['node', path.join(FIXTURES, 'content.js'), kept] },
    ]);
    await poll(
      () => mcpList(f),
      (l) => l.every((x) => x.status === 'connected'),
      15_000,
    );
    expect(processesWith(tag)).not.toEqual([]);
    expect((await lbot(f, ['mcp', 'remove', 'echo'])).exitCode).toBe(0);
    const gone = await poll(
      async () => processesWith(tag),
      (p) => p.length === 0,
      5000,
    );
    expect(gone).toEqual([]);
    const runId = await startRun(f, [{ dump_context: true }, done()], ['echo']);
    await f.serve.waitRun(runId);
    const [ctx] = await texts(f, runId);
    expect((JSON.parse(String(ctx)) as { resources: { tools: unknown[] } }).resources.tools).toEqual([]);
    const show = await lbot(f, ['--json', 'mcp', 'show', 'echo']);
    expect(show.exitCode).toBe(3);
    // Shutting serve down stops the servers it still runs.
    expect(processesWith(kept)).not.toEqual([]);
    await f.serve.stop('SIGTERM');
    expect(
      await poll(
        async () => processesWith(kept),
        (p) => p.length === 0,
        5000,
      ),
    ).toEqual([]);
  });
});

describe('[serve] the MCP bridge for external harnesses', () => {
  it('reads the current event and history during the run, refuses ungranted tools, and refuses after the run', async () => {
    const f = await setup([{ name: 'echo', command: ['node', path.join(FIXTURES, 'echo.js')] }]);
    await poll(
      () => mcpList(f),
      (l) => l[0]?.status === 'connected',
      15_000,
    );
    // The run holds until the bridge calls are done and the test opens the gate (a path in the plugin's own
    // dir, which the runner sees as its working dir), however slow the machine.
    const gate = path.join(f.plugins.dir('scripted'), 'gates', 'bridge-done');
    const runId = await startRun(f, [{ dump_context: true }, { wait_file: 'gates/bridge-done' }, say('bye'), done()], ['echo']);
    const [ctxText] = await poll(
      () => texts(f, runId),
      (t) => t.length > 0,
      10_000,
    );
    const ctx = JSON.parse(String(ctxText)) as { metadata: { mcp_bridge: { socket: string; token: string; command: string[]; env: Record<string, string> } } };
    const bridge = ctx.metadata.mcp_bridge;
    expect(bridge.command.slice(-4)).toEqual(['mcp', 'bridge', '--run', runId]);

    const [command = '', ...args] = bridge.command;
    const client = new Client({ name: 'harness', version: '1.0.0' });
    f.clients.push(client);
    await client.connect(new StdioClientTransport({ command, args, env: { ...bridge.env, PATH: process.env.PATH ?? '' }, stderr: 'pipe' }));
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(
      expect.arrayContaining([
        'langbot_get_current_event',
        'langbot_history_page',
        'langbot_history_search',
        'langbot_state_get',
        'langbot_state_set',
        'langbot_call_tool',
      ]),
    );
    const text = (r: unknown) => JSON.parse(String((r as { content: Array<{ text: string }> }).content[0]?.text)) as Record<string, unknown>;

    const current = await client.callTool({ name: 'langbot_get_current_event', arguments: {} });
    expect(current.isError).toBeFalsy();
    expect(JSON.stringify(text(current))).toContain('ev-1');
    const page = await client.callTool({ name: 'langbot_history_page', arguments: { limit: 10 } });
    expect(page.isError).toBeFalsy();
    expect(JSON.stringify(text(page))).toContain('ping');
    const granted = await client.callTool({ name: 'langbot_call_tool', arguments: { tool_name: 'echo', parameters: { text: 'via bridge' } } });
    expect(granted.isError).toBeFalsy();
    expect(JSON.stringify(text(granted))).toContain('via bridge');
    const refused = await client.callTool({ name: 'langbot_call_tool', arguments: { tool_name: 'slow', parameters: { ms: 1 } } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatchObject({ error: { code: 'unauthorized' } });
    // An unknown tool name is not_found (docs/tools.md); a missing required argument is invalid_argument.
    const unknown = await client.callTool({ name: 'langbot_call_tool', arguments: { tool_name: 'no_such_tool', parameters: {} } });
    expect(text(unknown)).toMatchObject({ error: { code: 'not_found' } });
    const missing = await client.callTool({ name: 'langbot_history_search', arguments: {} });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatchObject({ error: { code: 'invalid_argument' } });

    await mkdir(path.dirname(gate), { recursive: true });
    await writeFile(gate, '');
    const run = await f.serve.waitRun(runId, 20_000);
    expect(run.status).toBe('completed');
    // The router audited the bridge calls in the run record like the runner's own.
    const record = (await f.serve.request('GET', `/v1/runs/${runId}`)).json as { api_calls: Array<{ action: string; decision: string }> };
    expect(record.api_calls).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action: 'events.get', decision: 'allowed' }),
        expect.objectContaining({ action: 'tools.call', decision: 'denied' }),
      ]),
    );
    // Right after the run (before the sweep closes the connection) a call is refused unauthorized.
    const after = await client.callTool({ name: 'langbot_get_current_event', arguments: {} }).then(
      (r) => (r.isError ? String(text(r).error && (text(r).error as { code: string }).code) : 'answered'),
      () => 'connection closed',
    );
    expect(['unauthorized', 'connection closed']).toContain(after);
    const late = await lbot(f, ['mcp', 'bridge', '--run', runId], bridge.env);
    expect(late.exitCode).toBe(4);
    expect(late.stderr).toContain('unauthorized');
  });

  it('a bridge with a wrong token is refused', async () => {
    const f = await setup([]);
    const runId = await startRun(f, [{ dump_context: true }, { sleep_ms: 3000 }, done()], []);
    const [ctxText] = await poll(
      () => texts(f, runId),
      (t) => t.length > 0,
      10_000,
    );
    const bridge = (JSON.parse(String(ctxText)) as { metadata: { mcp_bridge: { env: Record<string, string> } } }).metadata.mcp_bridge;
    const r = await lbot(f, ['mcp', 'bridge', '--run', runId], { ...bridge.env, LBOT_BRIDGE_TOKEN: 'not-the-token' });
    expect(r.exitCode).toBe(4);
    await f.serve.waitRun(runId);
  });
});
