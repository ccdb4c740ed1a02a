// The MCP session lifecycle against in-memory servers (skills-mcp-tools.md §3.3, §8 #44-#46): start budget,
// 2/4/8 s retries, box_unavailable without retry, crash → reconnect, list_changed, call errors.
import { getEventListeners } from 'node:events';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { McpServerRecordSchema } from '../../../src/runtime/mcp/config.js';
import type { McpConnection, McpConnector } from '../../../src/runtime/mcp/connectors.js';
import { McpCallError, McpPhaseError } from '../../../src/runtime/mcp/errors.js';
import { McpSession, type SessionOptions } from '../../../src/runtime/mcp/session.js';

const record = McpServerRecordSchema.parse({ name: 'srv', uuid: 'u-1', command: ['x'] });

type Fake = { server: Server; tools: string[]; close(): Promise<void> };

/** An in-memory MCP server; tools answer `<name>:<text>`, `slow` waits `ms`, and `page` splits listing in two. */
async function fakeServer(tools: string[] = ['echo', 'slow']): Promise<{ conn: McpConnection; fake: Fake }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = new Server({ name: 'fake', version: '9.9.9' }, { capabilities: { tools: { listChanged: true } }, instructions: 'be nice' });
  const fake: Fake = { server, tools, close: () => serverSide.close() };
  server.setRequestHandler(ListToolsRequestSchema, (req) => {
    const all = fake.tools.map((name) => ({ name, description: `${name} tool`, inputSchema: { type: 'object' as const, properties: {} } }));
    // Two pages, to prove the client follows nextCursor.
    if (req.params?.cursor === 'p2') return { tools: all.slice(1) };
    return { tools: all.slice(0, 1), ...(all.length > 1 ? { nextCursor: 'p2' } : {}) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const args = req.params.arguments ?? {};
    if (req.params.name === 'slow') {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Number(args.ms));
        extra.signal.addEventListener('abort', () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    if (req.params.name === 'fail') return { content: [{ type: 'text', text: 'it broke' }], isError: true };
    return { content: [{ type: 'text', text: `${req.params.name}:${String(args.text ?? '')}` }] };
  });
  await server.connect(serverSide);
  const conn: McpConnection = {
    transport: clientSide,
    pid: 4242,
    stderrTail: () => '',
    exitNote: () => null,
    transportFailure: () => null,
    handshakePhase: 'mcp_init',
  };
  return { conn, fake };
}

const options = (connector: McpConnector, over: Partial<SessionOptions> = {}): SessionOptions => ({
  connector,
  startTimeoutMs: 60_000,
  retryDelaysMs: [2000, 4000, 8000],
  ...over,
});

const sessions: McpSession[] = [];
function session(connector: McpConnector, over: Partial<SessionOptions> = {}, rec = record): McpSession {
  const s = new McpSession(rec, options(connector, over));
  sessions.push(s);
  return s;
}

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});

describe('connecting', () => {
  it('connects, follows nextCursor when listing, and reports runtime info (§8 #46)', async () => {
    const { conn } = await fakeServer(['echo', 'slow', 'third']);
    const s = session(async () => conn);
    await s.start();
    const info = s.runtimeInfo();
    expect(info).toMatchObject({
      status: 'connected',
      error_phase: null,
      error_message: null,
      retry_count: 0,
      tool_count: 3,
      pid: 4242,
      server_info: { name: 'fake', version: '9.9.9' },
      instructions: 'be nice',
    });
    expect(info.tools.map((t) => t.name)).toEqual(['echo', 'slow', 'third']);
    expect(info).not.toHaveProperty('box_session_id');
    expect(await s.callTool('echo', { text: 'x' }, { timeoutMs: 5000 })).toEqual([{ type: 'text', text: 'echo:x' }]);
  });

  it('calls leave no listener behind on a long-lived caller signal', async () => {
    const { conn } = await fakeServer(['echo']);
    const s = session(async () => conn);
    await s.start();
    const connection = new AbortController();
    for (let i = 0; i < 50; i++) await s.callTool('echo', { text: String(i) }, { timeoutMs: 5000, signal: connection.signal });
    expect(getEventListeners(connection.signal, 'abort')).toHaveLength(0);
  });

  it('a disabled server never connects and reports disabled', async () => {
    const connector = vi.fn<McpConnector>();
    const s = session(connector, {}, McpServerRecordSchema.parse({ name: 'off', command: ['x'], enabled: false }));
    await s.start();
    expect(connector).not.toHaveBeenCalled();
    expect(s.runtimeInfo().status).toBe('disabled');
  });

  it('retries a failing server 3 times 2/4/8 s apart, then fails for good with "Failed after 4 attempts" (§8 #45)', async () => {
    vi.useFakeTimers();
    const t0 = Date.now();
    const at: number[] = [];
    const s = session(async () => {
      at.push(Date.now() - t0);
      throw new McpPhaseError('mcp_init', 'connection refused');
    });
    let ready = false;
    void s.start().then(() => (ready = true));
    await vi.advanceTimersByTimeAsync(13_999);
    expect(ready).toBe(false);
    expect(s.runtimeInfo()).toMatchObject({ status: 'error', error_phase: 'mcp_init', retry_count: 3 });
    await vi.advanceTimersByTimeAsync(1);
    expect(ready).toBe(true);
    expect(at).toEqual([0, 2000, 6000, 14000]);
    expect(s.runtimeInfo()).toMatchObject({ status: 'error', retry_count: 4, error_phase: 'mcp_init', next_retry_at: null });
    expect(s.runtimeInfo().error_message).toMatch(/^Failed after 4 attempts: connection refused/);
  });

  it('box_unavailable ends at once: retry_count 1, no retry sleeps (§8 #44, AC-155)', async () => {
    vi.useFakeTimers();
    const connector = vi.fn<McpConnector>(async () => {
      throw new McpPhaseError('box_unavailable', 'box_disabled_in_config');
    });
    const s = session(connector);
    await s.start();
    expect(connector).toHaveBeenCalledTimes(1);
    expect(s.runtimeInfo()).toMatchObject({ status: 'error', error_phase: 'box_unavailable', retry_count: 1, error_message: 'box_disabled_in_config' });
  });

  it('gives up when the start budget runs out, naming the timeout (AC-154)', async () => {
    vi.useFakeTimers();
    const s = session(() => new Promise<McpConnection>(() => undefined), { startTimeoutMs: 30_000 });
    let ready = false;
    void s.start().then(() => (ready = true));
    await vi.advanceTimersByTimeAsync(30_000);
    expect(ready).toBe(true);
    expect(s.runtimeInfo()).toMatchObject({ status: 'error', retry_count: 1 });
    expect(s.runtimeInfo().error_message).toMatch(/Connection timeout after 30 seconds/);
  });

  it('firstOutcome resolves after the first failed attempt while retries go on', async () => {
    vi.useFakeTimers();
    const connector = vi.fn<McpConnector>(async () => {
      throw new McpPhaseError('process_start', 'exited with code 1');
    });
    const s = session(connector);
    await s.firstOutcome();
    expect(connector).toHaveBeenCalledTimes(1);
    expect(s.runtimeInfo()).toMatchObject({ status: 'error', error_phase: 'process_start', retry_count: 1 });
    expect(s.runtimeInfo().next_retry_at).not.toBeNull();
  });
});

describe('after connecting', () => {
  it('a server that goes away is reported as runtime and reconnected (AC-156 policy)', async () => {
    const fakes: Fake[] = [];
    const s = session(
      async () => {
        const { conn, fake } = await fakeServer();
        fakes.push(fake);
        return conn;
      },
      { retryDelaysMs: [50, 50, 50] },
    );
    await s.start();
    await fakes[0]?.close();
    await vi.waitFor(() => expect(s.runtimeInfo().error_phase).toBe('runtime'));
    expect(s.runtimeInfo().retry_count).toBe(1);
    await vi.waitFor(() => expect(s.status).toBe('connected'));
    expect(fakes).toHaveLength(2);
  });

  it('tools/list_changed re-lists the tools', async () => {
    const { conn, fake } = await fakeServer(['echo']);
    const s = session(async () => conn);
    await s.start();
    expect(s.tools.map((t) => t.name)).toEqual(['echo']);
    fake.tools.push('added');
    await fake.server.sendToolListChanged();
    await vi.waitFor(() => expect(s.tools.map((t) => t.name)).toEqual(['echo', 'added']));
  });

  it('call failures carry their reason: timeout, deadline, tool error, not connected', async () => {
    const { conn } = await fakeServer(['echo', 'slow', 'fail']);
    const s = session(async () => conn);
    await s.start();
    const failure = async (p: Promise<unknown>) => {
      try {
        await p;
        return 'no error';
      } catch (err) {
        return err instanceof McpCallError ? err.failure : String(err);
      }
    };
    expect(await failure(s.callTool('slow', { ms: 5000 }, { timeoutMs: 50 }))).toBe('timeout');
    expect(await failure(s.callTool('slow', { ms: 5000 }, { timeoutMs: 50, deadline: true }))).toBe('deadline');
    expect(await failure(s.callTool('fail', {}, { timeoutMs: 5000 }))).toBe('tool_error');
    const aborted = new AbortController();
    const pending = failure(s.callTool('slow', { ms: 5000 }, { timeoutMs: 5000, signal: aborted.signal }));
    aborted.abort();
    expect(await pending).toBe('cancelled');
    // The server stays usable after timeouts.
    expect(await s.callTool('echo', { text: 'y' }, { timeoutMs: 5000 })).toEqual([{ type: 'text', text: 'echo:y' }]);
    await s.close();
    expect(await failure(s.callTool('echo', {}, { timeoutMs: 5000 }))).toBe('not_connected');
  });
});
