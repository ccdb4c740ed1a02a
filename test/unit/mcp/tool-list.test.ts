// tools/list answers checked tool by tool (docs/mcp.md "Tool listing limits").
import { describe, expect, it } from 'vitest';
import { capDescription, MAX_DESCRIPTION_BYTES, ToolListCollector } from '../../../src/runtime/mcp/tool-list.js';

const schema = { type: 'object', properties: {} };

describe('tool listing checks', () => {
  it('caps a description at the byte limit with a marker, never splitting a character', () => {
    const text = 'é'.repeat(MAX_DESCRIPTION_BYTES);
    const capped = capDescription(text);
    expect(capped.truncated).toBe(true);
    expect(Buffer.byteLength(capped.text)).toBeLessThanOrEqual(MAX_DESCRIPTION_BYTES);
    expect(capped.text).not.toContain('\uFFFD');
    expect(capped.text).toMatch(/^é+\n\n\.\.\. \[description truncated: \d+ bytes, capped at 65536\]$/);
    expect(capDescription('short')).toEqual({ text: 'short', truncated: false, bytes: 5 });
  });

  it('drops malformed and duplicate tools with a warning naming each and why, keeps the rest', () => {
    const warnings: string[] = [];
    const c = new ToolListCollector('srv', (m) => warnings.push(m));
    c.add([
      { name: 'a', inputSchema: schema },
      { name: 'b', inputSchema: 'not-an-object' },
      null,
      { name: 'a', inputSchema: schema },
      { name: 'c', description: 7, inputSchema: schema },
      { name: 'd', description: null, inputSchema: schema },
    ]);
    expect(c.finish()).toEqual([
      { name: 'a', description: '', inputSchema: schema },
      { name: 'd', description: '', inputSchema: schema },
    ]);
    expect(warnings).toEqual([
      'MCP server srv: tool "b" is dropped: inputSchema: Invalid input: expected object, received string',
      expect.stringMatching(/^MCP server srv: tool #3 \(no name\) is dropped: /),
      'MCP server srv: tool "a" is listed more than once; the first one is kept',
      expect.stringMatching(/^MCP server srv: tool "c" is dropped: description: /),
    ]);
  });

  it('names at most 20 problems, then counts the rest in one warning', () => {
    const warnings: string[] = [];
    const c = new ToolListCollector('srv', (m) => warnings.push(m));
    c.add(Array.from({ length: 50 }, (_, i) => ({ name: `t${i}`, inputSchema: 'bad' })));
    expect(c.finish()).toEqual([]);
    expect(warnings).toHaveLength(21);
    expect(warnings.at(-1)).toBe('MCP server srv: 30 more tools were dropped or truncated (not named individually)');
  });

  it('keeps title, annotations and outputSchema; a malformed one is left out, the tool kept', () => {
    const c = new ToolListCollector('srv', () => undefined);
    const outputSchema = { type: 'object', properties: { n: { type: 'number' } } };
    const annotations = { readOnlyHint: true, title: 'Adder' };
    c.add([
      { name: 'add', title: 'Add numbers', inputSchema: schema, outputSchema, annotations },
      { name: 'odd', title: 7, inputSchema: schema, outputSchema: { type: 'string' }, annotations: 'x' },
    ]);
    expect(c.finish()).toEqual([
      { name: 'add', description: '', inputSchema: schema, title: 'Add numbers', annotations, outputSchema },
      { name: 'odd', description: '', inputSchema: schema },
    ]);
  });
});
