// A server's `tools/list` answer, checked tool by tool: a malformed tool is dropped with a warning
// instead of failing the whole listing, descriptions are capped, and the listing as a whole is bounded
// (docs/mcp.md "Tool listing limits").
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { z } from 'zod';
import { isRecord } from '../../core/json.js';
import type { JsonObject } from '../../core/protocol/event.js';
import { firstIssue } from '../../core/zod-issue.js';

/** At most this many tools per server; the rest are dropped with one warning. */
export const MAX_TOOLS_PER_SERVER = 10_000;
/** Budget of one server's listing: names, (capped) descriptions and input schemas, in UTF-8 bytes. */
export const MAX_LISTING_BYTES = 8 * 1024 * 1024;
/** A description longer than this (UTF-8 bytes, marker included) is truncated with a marker. */
export const MAX_DESCRIPTION_BYTES = 64 * 1024;
/** A tool whose input schema serializes to more than this is dropped. */
export const MAX_SCHEMA_BYTES = 256 * 1024;
export const MAX_TOOL_NAME_CHARS = 256;
/** Per listing, this many dropped or truncated tools are named in warnings; the rest are counted. */
const MAX_TOOL_WARNINGS = 20;

/** One page of `tools/list` as received: the tools are checked one by one below. */
export const ToolsListPageSchema = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

const ToolEntrySchema = z.looseObject({
  name: z.string().min(1).max(MAX_TOOL_NAME_CHARS),
  description: z.string().nullish(),
  inputSchema: z.looseObject({ type: z.literal('object') }),
  title: z.string().max(MAX_TOOL_NAME_CHARS).optional().catch(undefined),
  annotations: z.looseObject({}).optional().catch(undefined),
  outputSchema: z
    .looseObject({ type: z.literal('object') })
    .optional()
    .catch(undefined),
});

/** A tool as the server lists it; title, annotations and outputSchema are kept when well-formed. */
export type ListedTool = { name: string; description: string; inputSchema: JsonObject; title?: string; annotations?: JsonObject; outputSchema?: JsonObject };

function label(raw: unknown, index: number): string {
  const name = isRecord(raw) && typeof raw.name === 'string' ? raw.name : null;
  if (name === null) return `tool #${index + 1} (no name)`;
  return `tool ${JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name)}`;
}

function reason(error: z.ZodError): string {
  return error.issues.length === 0 ? 'it is malformed' : firstIssue(error, 'the entry').text;
}

/** Cuts `text` to at most `max` UTF-8 bytes (marker included) without splitting a character. */
export function capDescription(text: string, max = MAX_DESCRIPTION_BYTES): { text: string; truncated: boolean; bytes: number } {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= max) return { text, truncated: false, bytes };
  const marker = `\n\n... [description truncated: ${bytes} bytes, capped at ${max}]`;
  const buf = Buffer.from(text, 'utf8');
  let keep = Math.max(0, max - Buffer.byteLength(marker, 'utf8'));
  // Step back over UTF-8 continuation bytes so no character is split.
  while (keep > 0 && ((buf[keep] ?? 0) & 0xc0) === 0x80) keep--;
  return { text: `${buf.subarray(0, keep).toString('utf8')}${marker}`, truncated: true, bytes };
}

/** Collects the tools of one listing (all its pages), enforcing the caps. */
export class ToolListCollector {
  readonly tools: ListedTool[] = [];
  readonly #names = new Set<string>();
  readonly #server: string;
  readonly #warn: (message: string) => void;
  #bytes = 0;
  #seen = 0;
  #warned = 0;
  #unnamed = 0;
  #full = false;

  constructor(server: string, warn: (message: string) => void) {
    this.#server = server;
    this.#warn = warn;
  }

  /** True once a cap was reached: further pages are not requested. */
  get full(): boolean {
    return this.#full;
  }

  #note(message: string): void {
    this.#warned += 1;
    if (this.#warned <= MAX_TOOL_WARNINGS) this.#warn(`MCP server ${this.#server}: ${message}`);
    else this.#unnamed += 1;
  }

  #stop(why: string): void {
    this.#full = true;
    this.#warn(`MCP server ${this.#server}: ${why}; its remaining tools are dropped (${this.tools.length} kept)`);
  }

  /** Adds one page of raw tool entries. */
  add(entries: readonly unknown[]): void {
    for (const raw of entries) {
      if (this.#full) return;
      if (this.tools.length >= MAX_TOOLS_PER_SERVER) return this.#stop(`lists more than ${MAX_TOOLS_PER_SERVER} tools`);
      const index = this.#seen++;
      const parsed = ToolEntrySchema.safeParse(raw);
      if (!parsed.success) {
        this.#note(`${label(raw, index)} is dropped: ${reason(parsed.error)}`);
        continue;
      }
      const { name, description, inputSchema, title, annotations, outputSchema } = parsed.data;
      if (this.#names.has(name)) {
        this.#note(`${label(raw, index)} is listed more than once; the first one is kept`);
        continue;
      }
      const schemaBytes = Buffer.byteLength(JSON.stringify([inputSchema, annotations ?? null, outputSchema ?? null]), 'utf8');
      if (schemaBytes > MAX_SCHEMA_BYTES) {
        this.#note(`${label(raw, index)} is dropped: its schemas and annotations are ${schemaBytes} bytes (at most ${MAX_SCHEMA_BYTES})`);
        continue;
      }
      const capped = capDescription(description ?? '');
      if (capped.truncated) this.#note(`${label(raw, index)}: its description of ${capped.bytes} bytes is truncated to ${MAX_DESCRIPTION_BYTES}`);
      const size = Buffer.byteLength(name, 'utf8') + Buffer.byteLength(capped.text, 'utf8') + schemaBytes;
      if (this.#bytes + size > MAX_LISTING_BYTES) return this.#stop(`its tool listing exceeds ${MAX_LISTING_BYTES} bytes`);
      this.#bytes += size;
      this.#names.add(name);
      const schema: JsonObject = inputSchema;
      this.tools.push({
        name,
        description: capped.text,
        inputSchema: schema,
        ...(title !== undefined ? { title } : {}),
        ...(annotations !== undefined ? { annotations } : {}),
        ...(outputSchema !== undefined ? { outputSchema } : {}),
      });
    }
  }

  /** Reports the dropped or truncated tools that were not named individually. */
  finish(): ListedTool[] {
    if (this.#unnamed > 0) this.#warn(`MCP server ${this.#server}: ${this.#unnamed} more tools were dropped or truncated (not named individually)`);
    return this.tools;
  }
}

const MAX_TOOL_PAGES = 100;

/**
 * Lists the tools page by page. The result is read with a permissive schema and each tool is checked
 * on its own, so one malformed tool is dropped instead of failing the whole listing.
 */
export async function listToolPages(
  client: Client,
  server: string,
  log: (message: string) => void,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<ListedTool[]> {
  const out = new ToolListCollector(server, log);
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const res = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ToolsListPageSchema, {
      timeout: timeoutMs,
      ...(signal ? { signal } : {}),
    });
    out.add(res.tools);
    if (out.full || !res.nextCursor || res.nextCursor === cursor) return out.finish();
    cursor = res.nextCursor;
  }
  log(`MCP server ${server}: stopped listing tools after ${MAX_TOOL_PAGES} pages`);
  return out.finish();
}
