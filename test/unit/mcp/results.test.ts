// MCP tool results → content elements (skills-mcp-tools.md §3.4, §8 #48, §9 Q12), error flattening, line framing.
import { describe, expect, it } from 'vitest';
import { convertToolResult, flattenError, McpToolError } from '../../../src/runtime/mcp/results.js';

describe('tool result conversion', () => {
  it('passes text through and turns images into data URLs', () => {
    expect(convertToolResult({ content: [{ type: 'text', text: 'hi' }] })).toEqual([{ type: 'text', text: 'hi' }]);
    expect(convertToolResult({ content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] })).toEqual([
      { type: 'image_base64', image_base64: 'data:image/png;base64,AAAA' },
    ]);
  });

  it('resource text becomes text, a blob is decoded as UTF-8', () => {
    expect(convertToolResult({ content: [{ type: 'resource', resource: { uri: 'file:///a', text: 'doc' } }] })).toEqual([{ type: 'text', text: 'doc' }]);
    const blob = Buffer.from('blob text é').toString('base64');
    expect(convertToolResult({ content: [{ type: 'resource', resource: { uri: 'file:///b', blob } }] })).toEqual([{ type: 'text', text: 'blob text é' }]);
  });

  it('audio and resource links become placeholders naming their mime type or URI', () => {
    expect(convertToolResult({ content: [{ type: 'audio', data: 'AA', mimeType: 'audio/wav' }] })).toEqual([
      { type: 'text', text: '[audio content: audio/wav]' },
    ]);
    expect(convertToolResult({ content: [{ type: 'resource_link', uri: 'file:///x', name: 'x' }] })).toEqual([
      { type: 'text', text: '[resource_link content: file:///x]' },
    ]);
  });

  it('structured content stands in for empty content; an empty result is one empty text', () => {
    expect(convertToolResult({ content: [], structuredContent: { answer: 42 } })).toEqual([
      { type: 'text', text: '{"answer":42}' },
      { type: 'structured_content', structured_content: { answer: 42 } },
    ]);
    expect(convertToolResult({ content: [] })).toEqual([{ type: 'text', text: '' }]);
  });

  it('structured content is kept when text is also present', () => {
    expect(convertToolResult({ content: [{ type: 'text', text: '42' }], structuredContent: { answer: 42 } })).toEqual([
      { type: 'text', text: '42' },
      { type: 'structured_content', structured_content: { answer: 42 } },
    ]);
  });

  it('isError throws with the joined texts, or a generic message', () => {
    expect(() =>
      convertToolResult({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
        isError: true,
      }),
    ).toThrow(new McpToolError('a\nb'));
    expect(() => convertToolResult({ content: [], isError: true })).toThrow('Unknown error from MCP tool');
  });

  it('flattens nested and aggregate errors into unique leaves', () => {
    const inner = new TypeError('boom');
    const agg = new AggregateError([inner, new RangeError('far'), inner], 'many');
    expect(flattenError(agg)).toBe('TypeError: boom; RangeError: far');
    expect(flattenError('plain')).toBe('plain');
  });
});
