// What lbot offers MCP servers as a client (docs/mcp.md "Client capabilities"): roots (the configured
// list, or the box workspace for a box server), elicitation answered on a terminal, with the form's
// defaults, or refused; sampling through a model the operator granted the server (sampling.ts), else refused.
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  type ClientCapabilities,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpServerRecord } from './config.js';
import { samplingRefused, type Sampler } from './sampling.js';

/**
 * How a session answers `elicitation/create`: `prompt` asks on the terminal, `defaults` accepts the
 * form with its defaults (the SDK fills them in), `decline` refuses; `none` (lbot serve) does not
 * declare elicitation at all.
 */
export type ElicitationMode = 'prompt' | 'defaults' | 'decline' | 'none';

/** Asks the user to fill in a form; resolves with the answer. */
export type ElicitationPrompt = (server: string, message: string, schema: FormSchema) => Promise<ElicitResult>;

export type FormSchema = { properties: Record<string, unknown>; required?: string[] | undefined };

/** The box workspace as the server inside the box sees it. */
const BOX_WORKSPACE = '/workspace';

export function clientCapabilities(mode: ElicitationMode, sampling = false): ClientCapabilities {
  return {
    roots: { listChanged: false },
    ...(sampling ? { sampling: {} } : {}),
    ...(mode === 'none' ? {} : { elicitation: { form: { applyDefaults: true } } }),
  };
}

/** The roots a server is offered: the configured directories, else the box workspace for a box server. */
export function rootsOf(record: McpServerRecord): Array<{ uri: string; name: string }> {
  const dirs = record.roots.length > 0 ? record.roots : record.in_box ? [BOX_WORKSPACE] : [];
  return dirs.map((dir) => ({ uri: pathToFileURL(dir).href, name: dir }));
}

/** Strips control characters from server text before it reaches a terminal. */
export function printable(text: string, max = 2000): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

export function installClientHandlers(
  client: Client,
  record: McpServerRecord,
  mode: ElicitationMode,
  prompt?: ElicitationPrompt,
  sampler?: Sampler | null,
): void {
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: rootsOf(record) }));
  if (sampler) client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => sampler(request.params, extra.signal));
  else {
    // Not declared, but a server may ask anyway: it gets a refusal that says how to grant a model.
    const fallback = client.fallbackRequestHandler;
    client.fallbackRequestHandler = async (request, extra) => {
      if (request.method === 'sampling/createMessage') throw samplingRefused(record.name);
      if (fallback) return fallback(request, extra);
      throw new McpError(ErrorCode.MethodNotFound, 'Method not found');
    };
  }
  if (mode === 'none') return;
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const params = request.params;
    if (params.mode === 'url') throw new McpError(ErrorCode.InvalidParams, 'lbot answers form elicitation only, not URL mode');
    if (mode === 'defaults') return { action: 'accept', content: {} };
    if (mode === 'decline' || !prompt) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `MCP server ${record.name} asked for user input, but there is no terminal to ask on (lbot mcp call --elicit defaults accepts the form's defaults)`,
      );
    }
    return prompt(record.name, printable(params.message), { properties: params.requestedSchema.properties, required: params.requestedSchema.required });
  });
}
