// Names MCP tools get in a run's tool table (skills-mcp-tools.md §3.4, §4.3): raw names when they are
// free, `<server>__<tool>` when a name is reserved, taken by another source, shared by several servers or
// not a valid provider function name. Nothing ever shadows a native tool (AC-157).
import { createHash } from 'node:crypto';
import type { ToolDescriptor } from '../../core/host/ports.js';
import type { JsonObject } from '../../core/protocol/event.js';

/** Names of host tools that external tools may never take (§4.3 rule 3). */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([
  'exec',
  'read',
  'write',
  'edit',
  'glob',
  'grep',
  'activate',
  'register_skill',
  'langbot_mcp_list_resources',
  'langbot_mcp_read_resource',
]);

/** The function-name pattern model providers accept (§4.5). */
export const PROVIDER_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_NAME = 64;

/** A tool as a server lists it. */
export type ListedTool = { name: string; description: string; inputSchema: JsonObject };

export type McpToolEntry = {
  server: string;
  /** The name the server knows the tool by (what `tools/call` sends). */
  tool: string;
  /** The name runners and models see. */
  exposed: string;
  descriptor: ToolDescriptor;
};

/** Server name lowered, with anything outside `[a-z0-9_-]` replaced by `_`. */
export function serverSlug(server: string): string {
  return server.toLowerCase().replace(/[^a-z0-9_-]/g, '_');
}

/** `<slug>__<tool>`, sanitized and cut to 64 characters (a short hash keeps cut names apart). */
export function qualifiedToolName(server: string, tool: string): string {
  const name = `${serverSlug(server)}__${tool.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
  if (name.length <= MAX_NAME) return name;
  const hash = createHash('sha256').update(`${server}\0${tool}`).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_NAME - 9)}_${hash}`;
}

export type NamingInput = {
  servers: ReadonlyArray<{ server: string; tools: readonly ListedTool[] }>;
  /** Qualify every MCP tool (`mcp.tool_name_prefix`). */
  prefixAll: boolean;
  /** Names other tool sources (native, skill, plugin) already hold. */
  taken?: ReadonlySet<string>;
};

/** Assigns exposed names; returns the entries in server order and one warning per renamed tool. */
export function nameMcpTools(input: NamingInput): { entries: McpToolEntry[]; warnings: string[] } {
  const taken = input.taken ?? new Set<string>();
  const owners = new Map<string, string[]>();
  for (const { server, tools } of input.servers) {
    for (const t of tools) owners.set(t.name, [...(owners.get(t.name) ?? []), server]);
  }
  const used = new Set<string>(taken);
  const entries: McpToolEntry[] = [];
  const warnings: string[] = [];
  // Raw names first, so a qualified name can never take a raw name that another server keeps.
  const plan: Array<{ server: string; tool: ListedTool; raw: boolean; why: string | null }> = [];
  for (const { server, tools } of input.servers) {
    const seen = new Set<string>();
    for (const tool of tools) {
      if (seen.has(tool.name)) continue; // a server listing one name twice: the first wins
      seen.add(tool.name);
      let why: string | null = null;
      if (input.prefixAll) why = null;
      else if (RESERVED_TOOL_NAMES.has(tool.name)) why = `${tool.name} is a reserved host tool name`;
      else if (taken.has(tool.name)) why = `${tool.name} is already provided by another tool source`;
      else if ((owners.get(tool.name) ?? []).length > 1) why = `${tool.name} is also offered by MCP server(s) ${(owners.get(tool.name) ?? []).filter((s) => s !== server).join(', ')}`;
      else if (!PROVIDER_TOOL_NAME.test(tool.name)) why = `${JSON.stringify(tool.name)} is not a valid function name for model providers`;
      const raw = !input.prefixAll && why === null;
      if (raw) used.add(tool.name);
      plan.push({ server, tool, raw, why });
    }
  }
  for (const { server, tool, raw, why } of plan) {
    let exposed = tool.name;
    if (!raw) {
      const base = qualifiedToolName(server, tool.name);
      exposed = base;
      for (let n = 2; used.has(exposed); n++) exposed = `${base.slice(0, MAX_NAME - String(n).length - 1)}_${n}`;
      used.add(exposed);
      if (why) warnings.push(`MCP server ${server}: tool ${why}; it is exposed as ${exposed}`);
    }
    entries.push({
      server,
      tool: tool.name,
      exposed,
      descriptor: { name: exposed, tool_type: 'mcp', description: tool.description, parameters: tool.inputSchema },
    });
  }
  return { entries, warnings };
}
