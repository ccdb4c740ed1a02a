// MCP `tools/call` results → the protocol's tool result (a list of content elements), and error text
// flattening (skills-mcp-tools.md §3.3, §3.4, §9 Q12).
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isRecord } from '../../core/json.js';
import type { ContentElement } from '../../core/protocol/event.js';

/** A tool that reported `isError: true`; the message is its text content. */
export class McpToolError extends Error {
  override name = 'McpToolError';
}

function blobText(blob: string): string {
  return Buffer.from(blob, 'base64').toString('utf8');
}

type Block = CallToolResult['content'][number];

function convertBlock(block: Block): ContentElement {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      return { type: 'image_base64', image_base64: `data:${block.mimeType};base64,${block.data}` };
    case 'resource': {
      const r = block.resource;
      if ('text' in r && typeof r.text === 'string') return { type: 'text', text: r.text };
      if ('blob' in r && typeof r.blob === 'string') return { type: 'text', text: blobText(r.blob) };
      return { type: 'text', text: `[resource content: ${r.uri}]` };
    }
    case 'audio':
      return { type: 'text', text: `[audio content: ${block.mimeType}]` };
    case 'resource_link':
      return { type: 'text', text: `[resource_link content: ${block.uri}]` };
    default: {
      const unknownBlock: unknown = block;
      const kind = isRecord(unknownBlock) ? String(unknownBlock.type) : 'unknown';
      return { type: 'text', text: `[${kind} content]` };
    }
  }
}

/**
 * Converts a call result. `isError` results throw McpToolError with the joined texts; an empty result
 * becomes one empty text element; structured content follows as a `structured_content` element (and
 * stands in as text for missing content).
 */
export function convertToolResult(result: CallToolResult): ContentElement[] {
  const content = Array.isArray(result.content) ? result.content : [];
  if (result.isError) {
    const texts = content.filter((b): b is Extract<Block, { type: 'text' }> => b.type === 'text').map((b) => b.text);
    throw new McpToolError(texts.length > 0 ? texts.join('\n') : 'Unknown error from MCP tool');
  }
  const out = content.map(convertBlock);
  const structured = result.structuredContent;
  if (structured !== undefined) {
    // Kept next to the text (which servers write for clients that cannot read it), never dropped.
    if (out.length === 0) out.push({ type: 'text', text: JSON.stringify(structured) });
    out.push({ type: 'structured_content', structured_content: structured });
  }
  return out.length > 0 ? out : [{ type: 'text', text: '' }];
}

/** `Type: message; Type: message` over the unique leaves of nested / aggregate errors (§3.3). */
export function flattenError(err: unknown): string {
  const leaves: string[] = [];
  const seen = new Set<unknown>();
  const walk = (e: unknown, depth: number) => {
    if (depth > 8 || seen.has(e)) return;
    seen.add(e);
    if (e instanceof AggregateError && e.errors.length > 0) {
      for (const inner of e.errors) walk(inner, depth + 1);
      return;
    }
    if (e instanceof Error) {
      if (e.cause !== undefined && e.message === '') return walk(e.cause, depth + 1);
      leaves.push(`${e.name}: ${e.message}`);
      return;
    }
    leaves.push(String(e));
  };
  walk(err, 0);
  return [...new Set(leaves)].join('; ');
}
