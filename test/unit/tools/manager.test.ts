// The tool manager: one table, qualified names on clashes, allow/deny grants (skills-mcp-tools.md §4; AC-119, AC-217, AC-218).
import { describe, expect, it } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import { buildToolTable, isGranted, ToolManager } from '../../../src/core/tools/manager.js';
import { NativeToolSource, type BoxToolPort } from '../../../src/core/tools/native.js';
import type { ToolDefinition, ToolSource, ToolSourceKind } from '../../../src/core/tools/types.js';

const def = (name: string): ToolDefinition => ({ name, description: `${name} tool`, parameters: { type: 'object', properties: {} } });

function source(kind: ToolSourceKind, owner: string, names: string[], calls: string[] = []): ToolSource {
  return {
    kind,
    owner,
    list: async () => names.map(def),
    call: async (name) => {
      calls.push(`${owner}:${name}`);
      return { from: owner, name };
    },
  };
}

const port = (available: boolean): BoxToolPort => ({
  available: async () => available,
  exec: async () => ({ ok: true }),
  fileOp: async () => ({ ok: true }),
});

const ctx = { run_id: 'r1', signal: new AbortController().signal };
const ALL = { allowed_tool_names: ['exec', 'read', 'write', 'edit', 'glob', 'grep', 'echo', 'srv__exec', 'plug__echo', 'activate'], denied_tool_names: [] };

describe('tool table', () => {
  it('lists native, skill, plugin, MCP tools in that order without duplicates', async () => {
    const table = await buildToolTable(
      [
        source('mcp', 'srv', ['mcp_tool']),
        source('plugin', 'plug', ['plugin_tool']),
        source('skill', 'skill', ['activate']),
        new NativeToolSource(port(true), { id: 's' }),
      ],
      () => undefined,
    );
    expect(table.map((e) => e.name)).toEqual(['exec', 'read', 'write', 'edit', 'glob', 'grep', 'activate', 'plugin_tool', 'mcp_tool']);
  });

  it('qualifies an external tool that takes a native name, even when the box is down, and warns once', async () => {
    const warnings: string[] = [];
    const manager = new ToolManager((m) => warnings.push(m));
    const sources = [new NativeToolSource(port(false), { id: 's' }), source('mcp', 'srv', ['exec'])];
    const t1 = await manager.forRun(sources, ALL);
    await manager.forRun(sources, ALL);
    expect(t1.entries().map((e) => e.name)).toEqual(['srv__exec']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('srv__exec');
  });

  it('gives a contested name to the higher-priority source and qualifies the later one', async () => {
    const calls: string[] = [];
    const manager = new ToolManager();
    const table = await manager.forRun([source('mcp', 'srv', ['echo'], calls), source('plugin', 'plug', ['echo'], calls)], {
      ...ALL,
      allowed_tool_names: ['echo', 'srv__echo'],
    });
    expect(table.entries().map((e) => `${e.name}<-${e.owner}`)).toEqual(['echo<-plug', 'srv__echo<-srv']);
    await table.call('srv__echo', {}, ctx);
    expect(calls).toEqual(['srv:echo']);
  });

  it('offers no native tools when no box backend is usable (AC-119)', async () => {
    const table = await new ToolManager().forRun([new NativeToolSource(port(false), { id: 's' })], ALL);
    expect(await table.list()).toEqual([]);
  });
});

describe('grants', () => {
  it('grants nothing with a null or empty allow list; exec is denied by default (AC-217)', async () => {
    const sources = [new NativeToolSource(port(true), { id: 's' })];
    for (const allowed of [null, []]) {
      const table = await new ToolManager().forRun(sources, { allowed_tool_names: allowed, denied_tool_names: [] });
      expect(await table.list()).toEqual([]);
      await expect(table.call('exec', { command: 'true' }, ctx)).rejects.toMatchObject({ code: 'unauthorized' });
    }
  });

  it('lets deny win over allow (AC-218)', async () => {
    const table = await new ToolManager().forRun([new NativeToolSource(port(true), { id: 's' }), source('plugin', 'plug', ['echo'])], {
      allowed_tool_names: ['exec', 'echo'],
      denied_tool_names: ['exec'],
    });
    expect((await table.list()).map((t) => t.name)).toEqual(['echo']);
    expect(isGranted('exec', { allowed_tool_names: ['exec'], denied_tool_names: ['exec'] })).toBe(false);
  });

  it('grants exec when named and the box is available (AC-119)', async () => {
    const table = await new ToolManager().forRun([new NativeToolSource(port(true), { id: 's' })], { allowed_tool_names: ['exec'], denied_tool_names: [] });
    expect(await table.list()).toEqual([expect.objectContaining({ name: 'exec', tool_type: 'native' })]);
  });

  it('answers unknown names with not_found', async () => {
    const table = await new ToolManager().forRun([], ALL);
    const err = await table.call('nope', {}, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LbotError);
    expect((err as LbotError).code).toBe('not_found');
  });
});
