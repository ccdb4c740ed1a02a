// Hostile MCP servers are contained: stdout noise, wrong response ids and a 1 GiB line leave lbot up with
// bounded memory, and the server processes are stopped (issue 5 "done when").
import { describe, expect, it } from 'vitest';
import { McpCallError } from '../../../src/runtime/mcp/errors.js';
import { MAX_LINE_BYTES } from '../../../src/core/protocol/index.js';
import { MAX_DESCRIPTION_BYTES, MAX_LISTING_BYTES, MAX_TOOLS_PER_SERVER } from '../../../src/runtime/mcp/tool-list.js';
import { fixture, openSession, stdioRecord } from './helpers.js';

const failureOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'no error';
  } catch (err) {
    return err instanceof McpCallError ? err.failure : String(err);
  }
};

describe('hostile servers', () => {
  it('noise on stdout is skipped and logged a bounded number of times; calls still work', async () => {
    const { session, logs } = openSession(stdioRecord('noisy', ['node', fixture('noisy.js')]));
    await session.start();
    expect(session.tools.map((t) => t.name)).toEqual(['echo']);
    for (let i = 0; i < 20; i++) expect(await session.callTool('echo', { text: `n${i}` }, { timeoutMs: 5000 })).toEqual([{ type: 'text', text: `n${i}` }]);
    await new Promise((r) => setTimeout(r, 300));
    expect(session.status).toBe('connected');
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.length).toBeLessThanOrEqual(21);
  });

  it('responses with wrong ids are dropped: the call times out, the session stays up', async () => {
    const { session } = openSession(stdioRecord('wrong', ['node', fixture('wrong-ids.js')]));
    await session.start();
    expect(session.status).toBe('connected');
    expect(await failureOf(session.callTool('echo', { text: 'x' }, { timeoutMs: 400 }))).toBe('timeout');
    expect(await failureOf(session.callTool('echo', { text: 'y' }, { timeoutMs: 400 }))).toBe('timeout');
    expect(session.status).toBe('connected');
  });

  it('a 1 GiB line is cut at the cap: the call fails, memory stays bounded, the server is stopped', async () => {
    const { session, groups } = openSession(stdioRecord('giant', ['node', fixture('giant-line.js')]), { retryDelaysMs: [60_000] });
    await session.start();
    const before = process.memoryUsage().rss;
    expect(await failureOf(session.callTool('flood', {}, { timeoutMs: 30_000 }))).toBe('connection_lost');
    const grown = process.memoryUsage().rss - before;
    expect(grown).toBeLessThan(20 * MAX_LINE_BYTES);
    await expect.poll(() => session.runtimeInfo().error_phase).toBe('runtime');
    expect(session.runtimeInfo().status).toBe('error');
    expect(session.runtimeInfo().error_message).toContain(`longer than ${MAX_LINE_BYTES} bytes`);
    expect(groups).toHaveLength(1);
  });

  it('a flood before the handshake fails the start, not lbot', async () => {
    const { session } = openSession(stdioRecord('giant-start', ['node', fixture('giant-line.js')], { FLOOD_ON_START: '1' }), { retryDelaysMs: [] });
    await session.start();
    expect(session.runtimeInfo()).toMatchObject({ status: 'error', error_phase: 'mcp_init', retry_count: 1 });
    expect(session.runtimeInfo().error_message).toContain('longer than');
  });

  it('one malformed tool of 10,000 is dropped with a warning, a 5 MiB description is capped, the rest are listed and callable', async () => {
    const { session, logs } = openSession(stdioRecord('many', ['node', fixture('many-tools.js')]));
    await session.start();
    expect(session.runtimeInfo()).toMatchObject({ status: 'connected', tool_count: 9999, retry_count: 0 });
    const names = session.tools.map((t) => t.name);
    expect(names).not.toContain('tool_04321');
    expect(names).toContain('tool_09999');
    expect(logs.filter((m) => m.includes('tool "tool_04321" is dropped: inputSchema'))).toHaveLength(1);
    const big = session.tools.find((t) => t.name === 'tool_00007');
    expect(big?.description.startsWith('BIG-START xxx')).toBe(true);
    expect(big?.description).toContain('description truncated');
    expect(big?.description).not.toContain('BIG-END');
    expect(Buffer.byteLength(big?.description ?? '')).toBeLessThanOrEqual(MAX_DESCRIPTION_BYTES);
    expect(logs.some((m) => m.includes('tool "tool_00007"') && m.includes('truncated'))).toBe(true);
    expect(await session.callTool('tool_09999', { text: 'hi' }, { timeoutMs: 5000 })).toEqual([{ type: 'text', text: 'tool_09999:hi' }]);
  });

  it(`a listing over ${MAX_TOOLS_PER_SERVER} tools across pages keeps the first ${MAX_TOOLS_PER_SERVER} with one warning`, async () => {
    const { session, logs } = openSession(
      stdioRecord('lots', ['node', fixture('many-tools.js')], { TOOL_COUNT: String(MAX_TOOLS_PER_SERVER + 50), PAGE_SIZE: '999', BIG_INDEX: '-1' }),
    );
    await session.start();
    expect(session.runtimeInfo()).toMatchObject({ status: 'connected', tool_count: MAX_TOOLS_PER_SERVER });
    expect(
      logs.filter((m) => m.includes(`lists more than ${MAX_TOOLS_PER_SERVER} tools`)),
      logs.join('\n'),
    ).toHaveLength(1);
    expect(await session.callTool('tool_00000', { text: 'a' }, { timeoutMs: 5000 })).toEqual([{ type: 'text', text: 'tool_00000:a' }]);
  });

  it('a listing over the byte budget keeps the tools that fit, with one warning', async () => {
    const env = { TOOL_COUNT: '200', PAGE_SIZE: '20', DESCRIPTION_BYTES: '60000', BAD_INDEX: '-1', BIG_INDEX: '-1' };
    const { session, logs } = openSession(stdioRecord('fat', ['node', fixture('many-tools.js')], env));
    await session.start();
    expect(session.status).toBe('connected');
    const kept = session.tools.length;
    expect(kept).toBeGreaterThan(100);
    expect(kept).toBeLessThan(200);
    const bytes = session.tools.reduce(
      (n, t) => n + Buffer.byteLength(t.name) + Buffer.byteLength(t.description) + Buffer.byteLength(JSON.stringify(t.inputSchema)),
      0,
    );
    expect(bytes).toBeLessThanOrEqual(MAX_LISTING_BYTES);
    expect(logs.filter((m) => m.includes(`exceeds ${MAX_LISTING_BYTES} bytes`))).toHaveLength(1);
  });

  it('a tool named exec is listed under its own name by the session (the tool manager qualifies it)', async () => {
    const { session } = openSession(stdioRecord('srv', ['node', fixture('exec-tool.js')]));
    await session.start();
    expect(session.tools.map((t) => t.name)).toEqual(['exec', 'echo']);
  });
});
