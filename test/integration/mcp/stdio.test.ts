// Host stdio MCP servers as real processes: the F-MCP fixtures, process-group cleanup, crash, timeout and
// die-after handling, list_changed, and result conversion through a real server.
import { describe, expect, it } from 'vitest';
import { groupGone } from '../../helpers/plugins.js';
import { McpCallError } from '../../../src/runtime/mcp/errors.js';
import { fixture, openSession, stdioRecord } from './helpers.js';

describe('F-MCP fixtures over stdio', () => {
  it('echo: tools echo and slow, calls answer, close leaves no process (AC-150)', async () => {
    const { session, groups } = openSession(stdioRecord('echo', ['node', fixture('echo.js')]));
    await session.start();
    expect(session.runtimeInfo()).toMatchObject({ status: 'connected', retry_count: 0, error_phase: null });
    expect(session.tools.map((t) => t.name)).toEqual(['echo', 'slow']);
    expect(await session.callTool('echo', { text: 'x' }, { timeoutMs: 5000 })).toEqual([{ type: 'text', text: 'x' }]);
    await session.close();
    expect(groups).toHaveLength(1);
  });

  it('children a server starts in its group are stopped with it', async () => {
    const { session, groups } = openSession(stdioRecord('forker', ['sh', '-c', `sleep 600 & exec node ${JSON.stringify(fixture('echo.js'))}`]));
    await session.start();
    expect(session.status).toBe('connected');
    const [pgid] = groups;
    expect(pgid && groupGone(pgid)).toBe(false);
    await session.close();
  });

  it('crash-on-start: 4 attempts, process_start, stderr in the message (AC-153)', async () => {
    const { session, groups } = openSession(stdioRecord('bad', ['node', fixture('crash-on-start.js')]));
    await session.start();
    const info = session.runtimeInfo();
    expect(info).toMatchObject({ status: 'error', retry_count: 4, error_phase: 'process_start' });
    expect(info.error_message).toMatch(/Failed after 4 attempts/);
    expect(info.error_message).toContain('exited with code 1');
    expect(info.error_message).toContain('refusing to start');
    expect(groups).toHaveLength(4);
  });

  it('a command that does not exist fails in process_start', async () => {
    const { session } = openSession(stdioRecord('nope', ['/nonexistent/mcp-server-binary']), { retryDelaysMs: [] });
    await session.start();
    expect(session.runtimeInfo()).toMatchObject({ status: 'error', error_phase: 'process_start', retry_count: 1 });
    expect(session.runtimeInfo().error_message).toContain('ENOENT');
  });

  it('no-handshake: error naming the timeout within the start budget, and the process is stopped (AC-154)', async () => {
    const { session } = openSession(stdioRecord('mute', ['node', fixture('no-handshake.js')]), { startTimeoutMs: 1500 });
    await session.start();
    expect(session.runtimeInfo()).toMatchObject({ status: 'error', error_phase: 'mcp_init', retry_count: 1 });
    expect(session.runtimeInfo().error_message).toMatch(/timeout/i);
  });

  it('die-after: runtime error after connecting, then a reconnect (AC-156)', async () => {
    const { session, groups } = openSession(stdioRecord('dies', ['node', fixture('die-after.js')], { DIE_AFTER_MS: '700' }), {
      retryDelaysMs: [300, 300, 300],
    });
    await session.start();
    expect(session.status).toBe('connected');
    await expect.poll(() => session.runtimeInfo().error_phase, { timeout: 10_000, interval: 20 }).toBe('runtime');
    expect(session.runtimeInfo().error_message).toContain('exited with code 3');
    await expect.poll(() => groups.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    await expect.poll(() => session.runtimeInfo().retry_count, { timeout: 20_000, interval: 50 }).toBe(4);
    await expect.poll(() => session.runtimeInfo().status, { timeout: 10_000 }).toBe('error');
    expect(session.runtimeInfo().error_message).toMatch(/Failed after 4 attempts/);
  });

  it('a server killed during a call fails the call with connection_lost (AC-158)', async () => {
    const { session, groups } = openSession(stdioRecord('echo', ['node', fixture('echo.js')]), { retryDelaysMs: [60_000] });
    await session.start();
    const call = session.callTool('slow', { ms: 60_000 }, { timeoutMs: 120_000 }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 300));
    process.kill(-(groups[0] ?? 0), 'SIGKILL');
    const err = await call;
    expect(err).toBeInstanceOf(McpCallError);
    expect(err instanceof McpCallError && err.failure).toBe('connection_lost');
  });

  it('tools/list_changed from a real server updates the tool list', async () => {
    const { session } = openSession(stdioRecord('lc', ['node', fixture('list-changed.js')]));
    await session.start();
    expect(session.tools.map((t) => t.name)).toEqual(['echo', 'add_tool']);
    await session.callTool('add_tool', { name: 'late' }, { timeoutMs: 5000 });
    await expect.poll(() => session.tools.map((t) => t.name), { timeout: 5000 }).toEqual(['echo', 'add_tool', 'late']);
  });

  it('every content kind converts to content elements through a real server', async () => {
    const { session } = openSession(stdioRecord('content', ['node', fixture('content.js')]));
    await session.start();
    const call = (tool: string) => session.callTool(tool, {}, { timeoutMs: 5000 });
    expect(await call('text')).toEqual([{ type: 'text', text: 'plain text' }]);
    expect((await call('image'))[0]).toMatchObject({ type: 'image_base64', image_base64: expect.stringMatching(/^data:image\/png;base64,iVBOR/) });
    expect(await call('resource_text')).toEqual([{ type: 'text', text: 'resource text' }]);
    expect(await call('resource_blob')).toEqual([{ type: 'text', text: 'blob text' }]);
    expect(await call('audio')).toEqual([{ type: 'text', text: '[audio content: audio/wav]' }]);
    expect(await call('resource_link')).toEqual([{ type: 'text', text: '[resource_link content: file:///linked.txt]' }]);
    expect(await call('structured')).toEqual([
      { type: 'text', text: '{"answer":42}' },
      { type: 'structured_content', structured_content: { answer: 42 } },
    ]);
    expect(await call('empty')).toEqual([{ type: 'text', text: '' }]);
    expect((await call('mixed')).map((c) => c.type)).toEqual(['text', 'image_base64']);
    await expect(call('error')).rejects.toMatchObject({ failure: 'tool_error', message: 'first problem\nsecond problem' });
    await expect(call('error_silent')).rejects.toMatchObject({ failure: 'tool_error', message: 'Unknown error from MCP tool' });
  });
});
