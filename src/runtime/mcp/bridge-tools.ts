// The MCP tools of the bridge: each one is a host API action of the run (runner-protocol.md §7, §10.7),
// so the proxy router authorizes and audits it like the runner's own call.
import type { JSONSchema } from 'zod/v4/core';
import type { RunSession } from '../../core/host/session.js';
import type { JsonObject } from '../../core/protocol/event.js';
import type { ProxyMethod } from '../../core/protocol/proxy.js';

export type BridgeTool = {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, JSONSchema.JSONSchema>; required?: string[] };
  annotations: { readOnlyHint: boolean; openWorldHint: boolean };
  /** The proxy action and its params (run_id is added by the bridge). */
  toProxy(args: Record<string, unknown>, session: RunSession | undefined): { method: ProxyMethod; params: JsonObject };
};

const SCOPE: JSONSchema.JSONSchema = { type: 'string', enum: ['conversation', 'actor', 'subject', 'runner'], description: 'state scope' };
const pick = (args: Record<string, unknown>, keys: readonly string[]): JsonObject =>
  Object.fromEntries(keys.filter((k) => args[k] !== undefined).map((k) => [k, args[k]]));

export const BRIDGE_TOOLS: readonly BridgeTool[] = [
  {
    name: 'langbot_get_current_event',
    description: 'The event this run handles (type, source, actor, input text and contents).',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true, openWorldHint: false },
    toProxy: (_args, session) => ({ method: 'events.get', params: { event_id: session?.event_id ?? '' } }),
  },
  {
    name: 'langbot_history_page',
    description: "One page of this conversation's transcript. Pass next_cursor back as before_cursor (backward) or after_cursor (forward).",
    inputSchema: {
      type: 'object',
      properties: {
        before_cursor: { type: 'string' },
        after_cursor: { type: 'string' },
        limit: { type: 'integer', minimum: 1, maximum: 100 },
        direction: { type: 'string', enum: ['backward', 'forward'] },
      },
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
    toProxy: (args) => ({ method: 'history.page', params: pick(args, ['before_cursor', 'after_cursor', 'limit', 'direction']) }),
  },
  {
    name: 'langbot_history_search',
    description: "Full-text search in this conversation's transcript.",
    inputSchema: { type: 'object', properties: { query: { type: 'string' }, top_k: { type: 'integer', minimum: 1 } }, required: ['query'] },
    annotations: { readOnlyHint: true, openWorldHint: false },
    toProxy: (args) => ({ method: 'history.search', params: pick(args, ['query', 'top_k']) }),
  },
  {
    name: 'langbot_state_get',
    description: 'Reads one state value of this run (scopes the binding enables).',
    inputSchema: { type: 'object', properties: { scope: SCOPE, key: { type: 'string' } }, required: ['scope', 'key'] },
    annotations: { readOnlyHint: true, openWorldHint: false },
    toProxy: (args) => ({ method: 'state.get', params: pick(args, ['scope', 'key']) }),
  },
  {
    name: 'langbot_state_set',
    description: 'Writes one state value of this run (scopes the binding enables).',
    inputSchema: { type: 'object', properties: { scope: SCOPE, key: { type: 'string' }, value: {} }, required: ['scope', 'key', 'value'] },
    annotations: { readOnlyHint: false, openWorldHint: false },
    toProxy: (args) => ({ method: 'state.set', params: pick(args, ['scope', 'key', 'value']) }),
  },
  {
    name: 'langbot_get_tool_detail',
    description: 'The description and parameter schema of a tool this run was granted.',
    inputSchema: { type: 'object', properties: { tool_name: { type: 'string' } }, required: ['tool_name'] },
    annotations: { readOnlyHint: true, openWorldHint: false },
    toProxy: (args) => ({ method: 'tools.get_detail', params: pick(args, ['tool_name']) }),
  },
  {
    name: 'langbot_call_tool',
    description: 'Calls a tool this run was granted (see ctx.resources.tools); anything else is refused.',
    inputSchema: { type: 'object', properties: { tool_name: { type: 'string' }, parameters: { type: 'object' } }, required: ['tool_name'] },
    annotations: { readOnlyHint: false, openWorldHint: true },
    toProxy: (args) => ({ method: 'tools.call', params: pick(args, ['tool_name', 'parameters']) }),
  },
];
