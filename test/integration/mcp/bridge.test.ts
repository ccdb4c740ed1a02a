// The MCP bridge's own refusals, through a real `lbot mcp bridge` process driven by the SDK's MCP client,
// against a BridgeServer over the real proxy router and SQLite stores: a missing required argument is
// invalid_argument, an unknown bridge tool is not_found, and a call in the gap after the run ended (the
// sweep is widened so the gap stays open) is unauthorized; a new bridge for the ended run exits 4.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/core/host/ports.js';
import { ProxyRouter } from '../../../src/core/host/proxy-router.js';
import { SessionRegistry, type RunSession } from '../../../src/core/host/session.js';
import { openSqliteStores, type SqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { BridgeServer } from '../../../src/runtime/mcp/bridge-server.js';
import { createModelProvider } from '../../../src/runtime/models/providers.js';
import { LBOT_BIN } from '../../helpers/serve.js';
import { binding, descriptor, envelope, models, runSession } from '../../unit/host/fixtures.js';

let dir: string;
let stores: SqliteStores;
let sessions: SessionRegistry;
let bridge: BridgeServer;
const clients: Client[] = [];
const clock: Clock = { now: () => Date.now(), after: () => () => {} };

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'lbot-bridge-'));
  stores = openSqliteStores(dir);
  sessions = new SessionRegistry();
  const router = new ProxyRouter({
    sessions,
    env: {
      stores,
      models: createModelProvider(models),
      toolsFor: () => undefined,
      knowledgeBases: [],
      retrieve: async () => [],
      clock,
      limits: { stateValueBytes: 262_144, storageValueBytes: 1024 },
      warn: () => {},
    },
    audit: (run_id, entry) => stores.runs.addApiCall(run_id, entry),
    auditUnattributed: (entry) => stores.runs.addUnattributedCall(entry),
    runnerOf: (run_id) => stores.runs.get(run_id)?.runner_id ?? null,
  });
  bridge = new BridgeServer({ dataDir: dir, port: { handle: (c) => router.handle(c), session: (id) => sessions.get(id) }, warn: () => {}, sweepMs: 600_000 });
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  bridge.close();
  stores.close();
  await rm(dir, { recursive: true, force: true });
});

function startRun(run_id: string): RunSession {
  const d = { ...descriptor({ permissions: { history: ['page', 'search'], events: ['get'] } }), id: 'plugin:acme/harness/default', plugin_name: 'harness' };
  const b = binding({ runner_id: d.id });
  const event = envelope({ event_id: `ev-${run_id}`, conversation_id: 'c1' });
  const now = Date.now() / 1000;
  const session = runSession(run_id, d, b, event, { plugin_identity: 'acme/harness', startedAt: now });
  stores.events.append({
    event_id: event.event_id,
    event_type: 'message.received',
    event_time: null,
    source: 'api',
    bot_id: null,
    workspace_id: null,
    conversation_id: 'c1',
    thread_id: null,
    actor_type: 'user',
    actor_id: 'u1',
    actor_name: null,
    subject_type: null,
    subject_id: null,
    input_text: 'ping',
    input_json: {},
    raw_ref: null,
    run_id,
    runner_id: d.id,
    metadata: {},
  });
  stores.runs.create({ run_id, runner_id: d.id, binding_id: b.binding_id, event_id: event.event_id, conversation_id: event.conversation_id, started_at: now });
  sessions.register(session);
  return session;
}

/** The error of a refused bridge call (an MCP tool error whose text is {"error": …}). */
function refusal(result: unknown): { code: string; message: string } | null {
  const r = result as { isError?: boolean; content: Array<{ text: string }> };
  if (!r.isError) return null;
  return (JSON.parse(r.content[0]?.text ?? '{}') as { error: { code: string; message: string } }).error;
}

describe('lbot mcp bridge refusals', () => {
  it('missing argument → invalid_argument, unknown tool → not_found, after the run ended → unauthorized', async () => {
    startRun('r1');
    const endpoint = bridge.register('r1');
    const client = new Client({ name: 'harness', version: '1.0.0' });
    clients.push(client);
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [LBOT_BIN, 'mcp', 'bridge', '--run', 'r1', '--socket', endpoint.socket],
        env: { LBOT_BRIDGE_TOKEN: endpoint.token, PATH: process.env.PATH ?? '' },
        stderr: 'pipe',
      }),
    );
    const search = (await client.listTools()).tools.find((t) => t.name === 'langbot_history_search');
    expect(search?.inputSchema.required).toEqual(['query']);

    expect(refusal(await client.callTool({ name: 'langbot_get_current_event', arguments: {} }))).toBeNull();
    expect(refusal(await client.callTool({ name: 'langbot_history_search', arguments: {} }))).toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('query'),
    });
    expect(refusal(await client.callTool({ name: 'langbot_history_search', arguments: { query: 42 } }))).toMatchObject({ code: 'invalid_argument' });
    expect(refusal(await client.callTool({ name: 'langbot_no_such_tool', arguments: {} }))).toMatchObject({ code: 'not_found' });

    // The run ends; the connection is still open (the sweep has not come), and the call is refused.
    sessions.unregister('r1');
    expect(refusal(await client.callTool({ name: 'langbot_get_current_event', arguments: {} }))).toMatchObject({
      code: 'unauthorized',
      message: expect.stringContaining('has ended'),
    });
    const late = await execa(process.execPath, [LBOT_BIN, 'mcp', 'bridge', '--run', 'r1', '--socket', endpoint.socket], {
      reject: false,
      env: { LBOT_BRIDGE_TOKEN: endpoint.token },
      input: '',
    });
    expect(late.exitCode).toBe(4);
    expect(late.stderr).toContain('unauthorized');
  });
});
