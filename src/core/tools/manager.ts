// The tool manager: merges every tool source into one table per run, resolves name clashes, applies the
// binding's allow/deny lists, and dispatches calls (skills-mcp-tools.md §4; box.md §12 S2, S8).
import type { ToolDescriptor, ToolProvider } from '../host/ports.js';
import type { JsonObject } from '../protocol/event.js';
import { LbotError } from '../errors.js';
import { NATIVE_TOOL_NAMES } from './native-defs.js';
import type { ToolCallContext, ToolDefinition, ToolSource, ToolSourceKind } from './types.js';

/** Names that belong to one kind of source; any other source offering them is qualified. */
const RESERVED: Record<string, ToolSourceKind> = {
  ...Object.fromEntries(NATIVE_TOOL_NAMES.map((n) => [n, 'native' as const])),
  activate: 'skill',
  register_skill: 'skill',
  langbot_mcp_list_resources: 'mcp',
  langbot_mcp_read_resource: 'mcp',
};

/** Which sources win a contested name: native → plugin → MCP → skill (§4.3). */
const PRIORITY: readonly ToolSourceKind[] = ['native', 'plugin', 'mcp', 'skill'];
/** The order the model sees tools in: native, skill, plugin, MCP (§4.2). */
const LISTING: readonly ToolSourceKind[] = ['native', 'skill', 'plugin', 'mcp'];

const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export type ToolTableEntry = {
  /** The name the run sees (plain, or `<owner>__<tool>` after a clash). */
  name: string;
  /** The name the source knows the tool by. */
  original_name: string;
  source: ToolSourceKind;
  owner: string;
  definition: ToolDefinition;
  source_ref: ToolSource;
};

export type ToolPolicy = { allowed_tool_names: readonly string[] | null; denied_tool_names: readonly string[] };

function slug(owner: string): string {
  return owner.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '') || 'tool';
}

/**
 * Builds the table: sources in priority order, each name inserted once; a clashing or reserved name
 * from a later source becomes `<owner>__<tool>` (with a warning). Native tools keep their plain names.
 */
export async function buildToolTable(sources: readonly ToolSource[], warn: (message: string) => void): Promise<ToolTableEntry[]> {
  const byName = new Map<string, ToolTableEntry>();
  const ordered = [...sources].sort((a, b) => PRIORITY.indexOf(a.kind) - PRIORITY.indexOf(b.kind));
  for (const source of ordered) {
    let tools: ToolDefinition[];
    try {
      tools = await source.list();
    } catch (err) {
      warn(`tools of ${source.kind} source ${source.owner} are unavailable: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    for (const def of tools) {
      let name = def.name;
      const reservedFor = RESERVED[name];
      const clash = byName.has(name) || (reservedFor !== undefined && reservedFor !== source.kind);
      if (clash) {
        const base = `${slug(source.owner)}__${def.name}`.slice(0, 64);
        name = base;
        for (let i = 2; byName.has(name); i++) name = `${base.slice(0, 60)}_${i}`;
        warn(
          `${source.kind} tool ${JSON.stringify(def.name)} from ${source.owner} clashes with ${byName.get(def.name)?.source ?? reservedFor} tool ${JSON.stringify(def.name)}; it is exposed as ${name}`,
        );
      }
      if (!NAME_PATTERN.test(name)) {
        warn(
          `${source.kind} tool ${JSON.stringify(def.name)} from ${source.owner} has a name models cannot call (allowed: A-Z a-z 0-9 _ -, 1-64 chars); it is skipped`,
        );
        continue;
      }
      byName.set(name, { name, original_name: def.name, source: source.kind, owner: source.owner, definition: { ...def, name }, source_ref: source });
    }
  }
  return [...byName.values()].sort((a, b) => LISTING.indexOf(a.source) - LISTING.indexOf(b.source));
}

/** Whether the binding grants a tool: named in allowed_tool_names and not in denied_tool_names (deny wins; null/empty allow grants nothing). */
export function isGranted(name: string, policy: ToolPolicy): boolean {
  if (policy.denied_tool_names.includes(name)) return false;
  return (policy.allowed_tool_names ?? []).includes(name);
}

/** The run-scoped provider: lists only granted tools and refuses calls to anything else. */
export class RunToolTable implements ToolProvider {
  readonly #entries: Map<string, ToolTableEntry>;
  readonly #granted: ToolTableEntry[];

  constructor(
    entries: readonly ToolTableEntry[],
    readonly policy: ToolPolicy,
  ) {
    this.#entries = new Map(entries.map((e) => [e.name, e]));
    this.#granted = entries.filter((e) => isGranted(e.name, policy));
  }

  /** Every tool in the table, granted or not (for `lbot tools`-style inspection). */
  entries(): ToolTableEntry[] {
    return [...this.#entries.values()];
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  async list(): Promise<ToolDescriptor[]> {
    return this.#granted.map((e) => ({ name: e.name, tool_type: e.source, description: e.definition.description, parameters: e.definition.parameters }));
  }

  async call(name: string, parameters: JsonObject, ctx: ToolCallContext): Promise<unknown> {
    const entry = this.#entries.get(name);
    if (!entry) throw new LbotError('not_found', `Tool not found: ${name}`, { details: { tool_name: name } });
    if (!isGranted(name, this.policy)) {
      throw new LbotError('unauthorized', `tool ${name} is not granted to this binding (resource_policy.allowed_tool_names / denied_tool_names)`, {
        details: { tool_name: name },
      });
    }
    return entry.source_ref.call(entry.original_name, parameters, ctx);
  }
}

/** Builds tool tables from a fixed set of sources; reports each clash warning once per manager. */
export class ToolManager {
  readonly #seen = new Set<string>();

  constructor(readonly warn: (message: string) => void = () => undefined) {}

  async forRun(sources: readonly ToolSource[], policy: ToolPolicy): Promise<RunToolTable> {
    const entries = await buildToolTable(sources, (m) => {
      if (this.#seen.has(m)) return;
      this.#seen.add(m);
      this.warn(m);
    });
    return new RunToolTable(entries, policy);
  }
}
