// MCP server records in the config file (skills-mcp-tools.md §3.1): the lbot schema on top of the core
// `mcp.servers[]` entry, name and transport validation, and building a record from `lbot mcp add` flags.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServerConfigSchema, type Config } from '../../core/config.js';
import { assertSafeEnv } from '../../core/env-policy.js';
import { LbotError } from '../../core/errors.js';
import { firstIssue } from '../../core/zod-issue.js';

/** Server names are lookup keys in paths and qualified tool names (AC-151). */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export const McpBoxOptionsSchema = z.looseObject({
  image: z.string().nullable().default(null),
  network: z.enum(['on', 'off']).default('on'),
  host_path: z.string().nullable().default(null),
  host_path_mode: z.enum(['ro', 'rw']).default('ro'),
  env: z.record(z.string(), z.string()).default({}),
  startup_timeout_sec: z.number().positive().default(120),
  cpus: z.number().positive().nullable().default(null),
  memory_mb: z.number().int().positive().nullable().default(null),
  pids_limit: z.number().int().positive().nullable().default(null),
  read_only_rootfs: z.boolean().nullable().default(null),
});
export type McpBoxOptions = z.infer<typeof McpBoxOptionsSchema>;

/** OAuth of a remote server (docs/mcp.md "OAuth"): the browser flow by default, or client credentials. */
export const McpOAuthSchema = z.looseObject({
  /** `authorization_code` (lbot mcp login) or `client_credentials` (machine-to-machine, no user). */
  grant: z.enum(['authorization_code', 'client_credentials']).default('authorization_code'),
  /** A pre-registered client; without one lbot registers itself (or uses client_metadata_url). */
  client_id: z.string().min(1).nullable().default(null),
  client_secret: z.string().min(1).nullable().default(null),
  /** PEM private key for private_key_jwt client authentication (client credentials). */
  private_key_file: z.string().min(1).nullable().default(null),
  signing_alg: z.string().min(1).default('RS256'),
  /** Scope to ask for when the server names none. */
  scope: z.string().min(1).nullable().default(null),
  /** An https URL of lbot's client metadata document, used as client_id where the server supports it. */
  client_metadata_url: z.string().url().nullable().default(null),
});
export type McpOAuthOptions = z.infer<typeof McpOAuthSchema>;

/** Sampling (docs/mcp.md "Client capabilities"): refused unless the operator grants the server a configured model. */
export const McpSamplingSchema = z.looseObject({
  /** The id of a configured llm model (`models[].id`) the server may sample with; null grants none. */
  model: z.string().min(1).nullable().default(null),
  /** The most tokens one sampling reply may take, whatever the server asks for. */
  max_tokens: z.number().int().positive().default(1024),
});

/** One `mcp.servers[]` entry as lbot reads it: the core fields plus the keys this module adds. */
export const McpServerRecordSchema = McpServerConfigSchema.extend({
  uuid: z.string().min(1).optional(),
  description: z.string().nullable().default(null),
  /** Working directory of a host stdio server. */
  cwd: z.string().nullable().default(null),
  /** Connect/request timeout of remote servers, seconds (§3.1 `timeout`). */
  timeout_sec: z.number().positive().default(10),
  box: McpBoxOptionsSchema.prefault({}),
  oauth: McpOAuthSchema.prefault({}),
  sampling: McpSamplingSchema.prefault({}),
  /** Directories offered to the server as MCP roots (a box server's default is its workspace). */
  roots: z.array(z.string().min(1)).default([]),
  created_at: z.string().nullable().default(null),
  updated_at: z.string().nullable().default(null),
});
export type McpServerRecord = z.infer<typeof McpServerRecordSchema>;

/** The `mcp` section's own settings (besides `servers`). */
export const McpSettingsSchema = z.looseObject({
  /** Expose every MCP tool as `<server>__<tool>` instead of its raw name (§3.4). */
  tool_name_prefix: z.boolean().default(false),
  /** Per-call timeout of `tools/call`, seconds; the run deadline bounds it further (§9 Q27). */
  call_timeout_sec: z.number().positive().default(120),
  /** Start budget of host stdio and remote servers, seconds (§3.3: 30 s). */
  start_timeout_sec: z.number().positive().default(30),
  /** Delays between connection attempts, seconds (§3.3: 2, 4, 8 → 4 attempts). */
  retry_delays_sec: z.array(z.number().nonnegative()).default([2, 4, 8]),
  /** Whether runs get a per-run bridge endpoint for external harnesses (runner-protocol.md §10.7). */
  bridge: z.looseObject({ enabled: z.boolean().default(true) }).prefault({}),
});
export type McpSettings = z.infer<typeof McpSettingsSchema>;

export type McpConfig = { settings: McpSettings; servers: McpServerRecord[] };

/** Reads the `mcp` section of a parsed config with lbot's MCP schema; a bad entry is a config.invalid error. */
export function readMcpConfig(config: Pick<Config, 'mcp'>): McpConfig {
  const settings = McpSettingsSchema.safeParse(config.mcp);
  if (!settings.success) throw invalidSection(settings.error, ['mcp']);
  const servers: McpServerRecord[] = [];
  for (const [i, raw] of config.mcp.servers.entries()) {
    const parsed = McpServerRecordSchema.safeParse(raw);
    if (!parsed.success) throw invalidSection(parsed.error, ['mcp', 'servers', String(i)]);
    assertSafeEnv(parsed.data.env, `mcp.servers.${i} (${parsed.data.name}).env`);
    assertSafeEnv(parsed.data.box.env, `mcp.servers.${i} (${parsed.data.name}).box.env`);
    servers.push(parsed.data);
  }
  return { settings: settings.data, servers };
}

function invalidSection(error: z.ZodError, at: string[]): LbotError {
  const issue = firstIssue(error, '', at);
  return new LbotError('config.invalid', issue.text, { details: { path: [...at, ...issue.path].join('.') } });
}

export function invalidConfig(message: string, hint?: string): LbotError {
  return new LbotError('mcp.invalid_config', message, hint ? { hint } : {});
}

/** Throws mcp.invalid_config unless `name` is a valid server name. */
export function checkServerName(name: string): void {
  if (!SERVER_NAME_PATTERN.test(name)) {
    throw invalidConfig(
      `invalid MCP server name ${JSON.stringify(name)}: use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit (no '/' or spaces)`,
      'for example: lbot mcp add acme__echo -- node server.js',
    );
  }
}

/** Checks the transport fields of a record (command for stdio, an http(s) URL otherwise). */
export function checkTransport(record: Pick<McpServerRecord, 'name' | 'transport' | 'command' | 'url' | 'in_box'>): void {
  if (record.transport === 'stdio') {
    if (!record.command || record.command.length === 0 || record.command[0] === '') {
      throw invalidConfig(
        `MCP server ${record.name}: a stdio server needs a command`,
        'lbot mcp add NAME -- CMD ARGS…, or lbot mcp add NAME --url URL --transport sse|http',
      );
    }
    if (record.url) throw invalidConfig(`MCP server ${record.name}: a stdio server takes a command, not --url`);
    return;
  }
  if (record.in_box) throw invalidConfig(`MCP server ${record.name}: --in-box applies to stdio servers only`);
  if (record.command && record.command.length > 0) throw invalidConfig(`MCP server ${record.name}: a ${record.transport} server takes --url, not a command`);
  if (!record.url) throw invalidConfig(`MCP server ${record.name}: a ${record.transport} server needs --url`);
  let url: URL;
  try {
    url = new URL(record.url);
  } catch {
    throw invalidConfig(`MCP server ${record.name}: --url ${JSON.stringify(record.url)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalidConfig(`MCP server ${record.name}: --url must be http:// or https://, got ${url.protocol}//`);
  }
}

export type AddServerInput = {
  name: string;
  command: string[];
  url?: string | undefined;
  transport?: string | undefined;
  env: Record<string, string>;
  headers: Record<string, string>;
  inBox: boolean;
  description?: string | undefined;
  cwd?: string | undefined;
  disabled?: boolean | undefined;
  oauth?: Partial<McpOAuthOptions> | undefined;
  roots?: string[] | undefined;
  samplingModel?: string | undefined;
};

const TRANSPORTS = ['stdio', 'sse', 'http'] as const;

function isTransport(value: string): value is (typeof TRANSPORTS)[number] {
  return (TRANSPORTS as readonly string[]).includes(value);
}

/** Builds and validates the record `lbot mcp add` stores; every refusal is mcp.invalid_config (AC-151). */
export function buildServerRecord(input: AddServerInput, now: string = new Date().toISOString()): McpServerRecord {
  checkServerName(input.name);
  const transport = input.transport ?? (input.url ? 'http' : 'stdio');
  if (!isTransport(transport)) {
    throw invalidConfig(`unknown MCP transport ${JSON.stringify(transport)}: use stdio (with -- CMD…), sse or http (with --url)`);
  }
  // The server process runs with these variables (on the host, or in the box with --in-box).
  assertSafeEnv(input.env, `MCP server ${input.name}: --env`);
  if (input.command.length === 0 && !input.url) {
    throw invalidConfig(
      `MCP server ${input.name}: give either a command after -- or --url URL`,
      'lbot mcp add NAME -- CMD ARGS…, or lbot mcp add NAME --url URL --transport sse|http',
    );
  }
  const record = McpServerRecordSchema.parse({
    name: input.name,
    uuid: randomUUID(),
    enabled: !input.disabled,
    transport,
    ...(input.command.length > 0 ? { command: input.command } : {}),
    ...(input.url ? { url: input.url } : {}),
    env: input.env,
    headers: input.headers,
    in_box: input.inBox,
    description: input.description ?? null,
    cwd: input.cwd ?? null,
    oauth: input.oauth ?? {},
    roots: input.roots ?? [],
    ...(input.samplingModel ? { sampling: { model: input.samplingModel } } : {}),
    created_at: now,
    updated_at: now,
  });
  checkTransport(record);
  return record;
}

/** The record as stored: defaults that equal the schema's are left out to keep the file small. */
export function storedRecord(record: McpServerRecord): Record<string, unknown> {
  const { box, timeout_sec, cwd, description, oauth, roots, sampling, ...rest } = record;
  const out: Record<string, unknown> = { ...rest };
  const oauthDefaults: Record<string, unknown> = McpOAuthSchema.parse({});
  const oauthSet = Object.fromEntries(Object.entries(oauth).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(oauthDefaults[k])));
  if (Object.keys(oauthSet).length > 0) out.oauth = oauthSet;
  if (roots.length > 0) out.roots = roots;
  if (JSON.stringify(sampling) !== JSON.stringify(McpSamplingSchema.parse({}))) out.sampling = sampling;
  if (description !== null) out.description = description;
  if (cwd !== null) out.cwd = cwd;
  if (timeout_sec !== 10) out.timeout_sec = timeout_sec;
  const boxDefaults = McpBoxOptionsSchema.parse({});
  if (JSON.stringify(box) !== JSON.stringify(boxDefaults)) out.box = box;
  return out;
}
