// Tool sources and definitions shared by the tool manager and every loader (skills-mcp-tools.md §4.1).
import type { JsonObject } from '../protocol/event.js';

export type ToolSourceKind = 'native' | 'skill' | 'plugin' | 'mcp';

/** A tool as a model sees it. */
export type ToolDefinition = {
  name: string;
  description: string;
  human_desc?: string;
  /** JSON Schema of the parameters (`{type: 'object', …}`). */
  parameters: JsonObject;
  /** What an MCP server lists besides (MCP `title`, `annotations`, `outputSchema`). */
  title?: string;
  annotations?: JsonObject;
  output_schema?: JsonObject;
};

export type ToolCallContext = { run_id: string; signal: AbortSignal };

/** One loader: native tools, skill tools, one MCP server, one plugin. */
export interface ToolSource {
  readonly kind: ToolSourceKind;
  /** Qualifier used when a name clashes: the MCP server slug, the plugin name, `skill`, `native`. */
  readonly owner: string;
  /** The tools this source offers right now (a source whose backing service is down offers none). */
  list(): Promise<ToolDefinition[]>;
  /** Calls a tool by the name the source gave it. Hard failures throw; soft ones return `{ok: false, error}`. */
  call(name: string, params: JsonObject, ctx: ToolCallContext): Promise<unknown>;
}
