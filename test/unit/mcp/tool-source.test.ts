// MCP servers as tool sources of the tool manager: qualified names for reserved and shared names (AC-157),
// grants, the run deadline bounding calls (AC-161), and runner-facing errors (AC-158).
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/core/host/api-error.js';
import { ToolManager } from '../../../src/core/tools/manager.js';
import { NativeToolSource, type BoxToolPort } from '../../../src/core/tools/native.js';
import { McpCallError } from '../../../src/runtime/mcp/errors.js';
import type { McpSession } from '../../../src/runtime/mcp/session.js';
import { bindingMayUseMcp, mcpCallApiError, McpToolSource, type McpSourceOptions } from '../../../src/runtime/mcp/tool-source.js';

type Call = { tool: string; timeoutMs: number; deadline: boolean | undefined };

/** A connected session stand-in: lists `tools`, records calls, answers or throws `fail`. */
function fakeSession(name: string, tools: string[], calls: Call[] = [], fail?: McpCallError): Pick<McpSession, 'name' | 'tools' | 'callTool'> {
  return {
    name,
    tools: tools.map((t) => ({ name: t, description: `${t} of ${name}`, inputSchema: { type: 'object' } })),
    callTool: async (tool: string, _args: unknown, opts: { timeoutMs: number; deadline?: boolean }) => {
      calls.push({ tool, timeoutMs: opts.timeoutMs, deadline: opts.deadline });
      if (fail) throw fail;
      return [{ type: 'text', text: `${name}:${tool}` }];
    },
  };
}

const port: BoxToolPort = { available: async () => true, exec: async () => ({ ok: true, from: 'native' }), fileOp: async () => ({ ok: true }) };
const opts = (over: Partial<McpSourceOptions> = {}): McpSourceOptions => ({ callTimeoutMs: 120_000, prefixAll: false, deadlineOf: () => null, ...over });
const ctx = { run_id: 'r1', signal: new AbortController().signal };

describe('names in the run tool table', () => {
  it('an MCP tool named exec is exposed only as <server>__exec, with one warning; exec stays native (AC-157)', async () => {
    const warnings: string[] = [];
    const manager = new ToolManager((m) => warnings.push(m));
    const sources = [new NativeToolSource(port, { id: 's' }), new McpToolSource(fakeSession('srv', ['exec', 'echo']), opts())];
    const policy = { allowed_tool_names: ['exec', 'srv__exec', 'echo'], denied_tool_names: [] };
    const table = await manager.forRun(sources, policy);
    await manager.forRun(sources, policy);
    const names = table.entries().map((e) => `${e.name}<-${e.source}`);
    expect(names).toContain('exec<-native');
    expect(names).toContain('srv__exec<-mcp');
    expect(names).toContain('echo<-mcp');
    expect(warnings).toEqual([expect.stringContaining('srv__exec')]);
    expect(await table.call('exec', { command: 'true' }, ctx)).toMatchObject({ from: 'native' });
    expect(await table.call('srv__exec', {}, ctx)).toEqual([{ type: 'text', text: 'srv:exec' }]);
  });

  it('two servers offering one name: the second is qualified and calls reach the right server', async () => {
    const table = await new ToolManager().forRun(
      [new McpToolSource(fakeSession('a', ['echo']), opts()), new McpToolSource(fakeSession('b', ['echo']), opts())],
      { allowed_tool_names: ['echo', 'b__echo'], denied_tool_names: [] },
    );
    expect(table.entries().map((e) => e.name)).toEqual(['echo', 'b__echo']);
    expect(await table.call('b__echo', {}, ctx)).toEqual([{ type: 'text', text: 'b:echo' }]);
  });

  it('mcp.tool_name_prefix qualifies every tool and still calls it by its own name', async () => {
    const calls: Call[] = [];
    const table = await new ToolManager().forRun([new McpToolSource(fakeSession('srv', ['echo'], calls), opts({ prefixAll: true }))], {
      allowed_tool_names: ['srv__echo'],
      denied_tool_names: [],
    });
    expect((await table.list()).map((t) => t.name)).toEqual(['srv__echo']);
    await table.call('srv__echo', {}, ctx);
    expect(calls.map((c) => c.tool)).toEqual(['echo']);
  });

  it('lists only granted tools; deny wins', async () => {
    const table = await new ToolManager().forRun([new McpToolSource(fakeSession('srv', ['echo', 'slow']), opts())], {
      allowed_tool_names: ['echo', 'slow'],
      denied_tool_names: ['slow'],
    });
    expect((await table.list()).map((t) => t.name)).toEqual(['echo']);
  });
});

describe('whether a binding needs MCP servers at all', () => {
  const binding = (allowed: string[] | null, denied: string[] = []) => ({
    resource_policy: {
      allowed_model_uuids: null,
      allowed_tool_names: allowed,
      denied_tool_names: denied,
      allowed_kb_uuids: null,
      allow_plugin_storage: true,
      allow_workspace_storage: false,
    },
  });
  it('no grants or only host tools: no; any other granted name: yes', () => {
    expect(bindingMayUseMcp(binding(null))).toBe(false);
    expect(bindingMayUseMcp(binding([]))).toBe(false);
    expect(bindingMayUseMcp(binding(['exec', 'read', 'activate']))).toBe(false);
    expect(bindingMayUseMcp(binding(['echo'], ['echo']))).toBe(false);
    expect(bindingMayUseMcp(binding(['echo']))).toBe(true);
    expect(bindingMayUseMcp(binding(['srv__exec']))).toBe(true);
  });
});

describe('calls', () => {
  it('the per-call timeout is cut to what is left of the run (AC-161)', async () => {
    const calls: Call[] = [];
    const now = 1_000_000;
    const source = new McpToolSource(fakeSession('srv', ['slow'], calls), opts({ deadlineOf: () => (now + 3000) / 1000, now: () => now }));
    await source.call('slow', {}, ctx);
    expect(calls[0]).toEqual({ tool: 'slow', timeoutMs: 3000, deadline: true });
    const open = new McpToolSource(fakeSession('srv', ['slow'], calls), opts());
    await open.call('slow', {}, ctx);
    expect(calls[1]).toEqual({ tool: 'slow', timeoutMs: 120_000, deadline: false });
  });

  it('a call after the deadline is deadline_exceeded without reaching the server', async () => {
    const calls: Call[] = [];
    const source = new McpToolSource(fakeSession('srv', ['slow'], calls), opts({ deadlineOf: () => 1, now: () => 5000 }));
    await expect(source.call('slow', {}, ctx)).rejects.toMatchObject({ code: 'deadline_exceeded' });
    expect(calls).toEqual([]);
  });

  it('MCP failures become API errors with details.phase tool_call (AC-158)', async () => {
    const lost = new McpCallError('connection_lost', 'MCP server srv went away', 'srv', 'slow');
    const source = new McpToolSource(fakeSession('srv', ['slow'], [], lost), opts());
    const err: unknown = await source.call('slow', {}, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err instanceof ApiError && err.toWire()).toMatchObject({
      code: 'runtime_error',
      retryable: true,
      details: { phase: 'tool_call', server: 'srv', tool: 'slow', reason: 'mcp_connection_lost' },
    });
    const codes = (['deadline', 'timeout', 'not_connected', 'cancelled', 'protocol', 'tool_error'] as const).map(
      (f) => mcpCallApiError(new McpCallError(f, 'm', 's', 't')).code,
    );
    expect(codes).toEqual(['deadline_exceeded', 'runtime_error', 'runtime_error', 'runtime_error', 'runtime_error', 'runtime_error']);
  });
});
