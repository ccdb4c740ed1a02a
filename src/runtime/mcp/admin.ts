// What `lbot mcp …` does: edit the server list in the config file, show it masked with the live state of
// running hosts, and test, list and call servers through short-lived sessions.
import type { Config } from '../../core/config.js';
import { LbotError } from '../../core/errors.js';
import { isRecord } from '../../core/json.js';
import type { JsonObject } from '../../core/protocol/event.js';
import type { ConfigFile } from '../../core/stores/config-file.js';
import { buildServerRecord, readMcpConfig, storedRecord, type AddServerInput, type McpServerRecord } from './config.js';
import type { McpConnector } from './connectors.js';
import { McpCallError } from './errors.js';
import { readLiveServers, type LiveServer } from './live-state.js';
import { McpManager } from './manager.js';
import { maskServerRecord } from './masking.js';
import type { McpRuntimeInfo, McpSession, SessionOptions } from './session.js';
import { buildToolTable } from '../../core/tools/manager.js';
import type { ToolDefinition } from '../../core/tools/types.js';
import { McpToolSource } from './tool-source.js';
import { login, logout, type LoginOptions, type LoginResult } from './oauth-login.js';

export type AdminContext = {
  dataDir: string;
  configFile: ConfigFile;
  warn(message: string): void;
  boxConnector?: McpConnector | undefined;
  /** How a server's request for user input is answered (default: refused). */
  elicitation?: Pick<SessionOptions, 'elicitation' | 'prompt'>;
};

/** A server as `mcp list` prints it: masked record, where it runs, and its live state if a host runs it. */
export type ServerSummary = {
  name: string;
  uuid: string | null;
  mode: McpServerRecord['transport'];
  enabled: boolean;
  in_box: boolean;
  target: string;
  status: string;
  error_phase: string | null;
  error_message: string | null;
  retry_count: number;
  tool_count: number;
  pid: number | null;
  host_pid: number | null;
};

function notFound(name: string): LbotError {
  return new LbotError('mcp.not_found', `MCP server ${name} is not configured`, { details: { name }, hint: 'lbot mcp list shows the configured servers' });
}

function findRecord(config: Config, name: string): McpServerRecord {
  const record = readMcpConfig(config).servers.find((s) => s.name === name);
  if (!record) throw notFound(name);
  return record;
}

/** Reads `raw.mcp.servers` as a mutable list, creating the section when absent. */
function rawServers(raw: Record<string, unknown>): unknown[] {
  const mcp = isRecord(raw.mcp) ? raw.mcp : {};
  raw.mcp = mcp;
  const servers = Array.isArray(mcp.servers) ? mcp.servers : [];
  mcp.servers = servers;
  return servers;
}

const rawName = (entry: unknown) => (isRecord(entry) && typeof entry.name === 'string' ? entry.name : null);

function target(record: McpServerRecord): string {
  const masked = maskServerRecord(record);
  if (record.transport !== 'stdio') return typeof masked.url === 'string' ? masked.url : '';
  return Array.isArray(masked.command) ? masked.command.map(String).join(' ') : '';
}

function summary(record: McpServerRecord, live: LiveServer | undefined): ServerSummary {
  const info = live?.runtime_info;
  const num = (v: unknown, d: number) => (typeof v === 'number' ? v : d);
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    name: record.name,
    uuid: record.uuid ?? null,
    mode: record.transport,
    enabled: record.enabled,
    in_box: record.in_box,
    target: target(record),
    status: !record.enabled ? 'disabled' : (str(info?.status) ?? 'idle'),
    error_phase: str(info?.error_phase),
    error_message: str(info?.error_message),
    retry_count: num(info?.retry_count, 0),
    tool_count: num(info?.tool_count, 0),
    pid: typeof info?.pid === 'number' ? info.pid : null,
    host_pid: live?.owner_pid ?? null,
  };
}

export async function addServer(ctx: AdminContext, input: AddServerInput): Promise<Record<string, unknown>> {
  const record = buildServerRecord(input);
  await ctx.configFile.update((raw) => {
    const servers = rawServers(raw);
    if (servers.some((s) => rawName(s) === record.name)) {
      throw new LbotError('mcp.exists', `MCP server ${record.name} already exists`, {
        details: { name: record.name },
        hint: `remove it first with lbot mcp remove ${record.name}, or pick another name`,
      });
    }
    servers.push(storedRecord(record));
  });
  return maskServerRecord(record);
}

export async function removeServer(ctx: AdminContext, name: string): Promise<{ removed: string }> {
  findRecord(ctx.configFile.config, name);
  await ctx.configFile.update((raw) => {
    const servers = rawServers(raw);
    const kept = servers.filter((s) => rawName(s) !== name);
    if (kept.length === servers.length) throw notFound(name);
    if (isRecord(raw.mcp)) raw.mcp.servers = kept;
  });
  return { removed: name };
}

export async function setEnabled(ctx: AdminContext, name: string, enabled: boolean): Promise<ServerSummary> {
  findRecord(ctx.configFile.config, name);
  await ctx.configFile.update((raw) => {
    for (const s of rawServers(raw)) {
      if (rawName(s) === name && isRecord(s)) {
        s.enabled = enabled;
        s.updated_at = new Date().toISOString();
      }
    }
  });
  return summary(findRecord(ctx.configFile.config, name), undefined);
}

export function listServers(ctx: AdminContext): { servers: ServerSummary[] } {
  const live = readLiveServers(ctx.dataDir);
  return { servers: readMcpConfig(ctx.configFile.config).servers.map((r) => summary(r, live.get(r.name))) };
}

export function showServer(
  ctx: AdminContext,
  name: string,
): { server: Record<string, unknown>; runtime_info: Record<string, unknown> | null; status: ServerSummary } {
  const record = findRecord(ctx.configFile.config, name);
  const live = readLiveServers(ctx.dataDir).get(name);
  return { server: maskServerRecord(record), runtime_info: live ? { ...live.runtime_info, host_pid: live.owner_pid } : null, status: summary(record, live) };
}

function transientManager(ctx: AdminContext): McpManager {
  // Only the settings are taken from the config: sessions are created per command below.
  const config = ctx.configFile.config;
  return new McpManager({ dataDir: ctx.dataDir, config: { ...config, mcp: { ...config.mcp, servers: [] } }, warn: ctx.warn, boxConnector: ctx.boxConnector });
}

export type TestResult = {
  name: string;
  mode: McpServerRecord['transport'];
  status: McpRuntimeInfo['status'];
  ok: boolean;
  tools: string[];
  error_phase: McpRuntimeInfo['error_phase'];
  error_message: string | null;
  error_code: string | null;
  hint: string | null;
  retry_count: number;
  server_info: McpRuntimeInfo['server_info'];
  timings: { connect_ms: number | null; list_tools_ms: number | null; total_ms: number };
  box_session_id?: string;
};

/** `mcp test NAME`: connects a short-lived session with the full retry policy, lists tools, closes it. */
export async function testServer(ctx: AdminContext, name: string): Promise<TestResult> {
  const record = findRecord(ctx.configFile.config, name);
  const manager = transientManager(ctx);
  const session = manager.createSession({ ...record, enabled: true }, true, ctx.elicitation);
  const started = Date.now();
  try {
    await session.start();
    const info = session.runtimeInfo();
    return {
      name,
      mode: record.transport,
      status: info.status,
      ok: info.status === 'connected',
      tools: info.tools.map((t) => t.name),
      error_phase: info.error_phase,
      error_message: info.error_message,
      error_code: info.error_code,
      hint: info.error_hint,
      retry_count: info.retry_count,
      server_info: info.server_info,
      timings: { ...info.timings, total_ms: Date.now() - started },
      ...(info.box_session_id ? { box_session_id: info.box_session_id } : {}),
    };
  } finally {
    await session.close();
    await manager.close();
  }
}

export type ToolListing = {
  tools: Array<
    { name: string; server: string; tool: string; description: string; parameters: JsonObject } & Pick<
      ToolDefinition,
      'title' | 'annotations' | 'output_schema'
    >
  >;
  servers: Array<{ name: string; status: string; error_phase: string | null; error_message: string | null; error_code: string | null }>;
  warnings: string[];
};

/**
 * `mcp tools [NAME]`: connects the enabled servers (or the named one) and shows their tools under the
 * names runs see them by (clashes and reserved names become `<server>__<tool>`, AC-157).
 */
export async function listTools(ctx: AdminContext, name?: string): Promise<ToolListing> {
  const all = readMcpConfig(ctx.configFile.config);
  const records = name ? [{ ...findRecord(ctx.configFile.config, name), enabled: true }] : all.servers.filter((s) => s.enabled);
  // Session warnings (tools dropped from a listing, capped descriptions) join the listing's warnings.
  const warnings: string[] = [];
  const manager = transientManager({ ...ctx, warn: (m) => warnings.push(m) });
  const sessions: McpSession[] = records.map((r) => manager.createSession(r, true, ctx.elicitation));
  try {
    await Promise.all(sessions.map((s) => (name ? s.start() : s.firstOutcome())));
    const opts = { callTimeoutMs: all.settings.call_timeout_sec * 1000, prefixAll: all.settings.tool_name_prefix, deadlineOf: () => null };
    const table = await buildToolTable(
      sessions.filter((s) => s.status === 'connected').map((s) => new McpToolSource(s, opts)),
      (m) => warnings.push(m),
    );
    return {
      tools: table.map(({ name, owner, original_name, definition: { description, parameters, title, annotations, output_schema } }) => ({
        name,
        server: owner,
        tool: original_name,
        description,
        parameters,
        ...(title !== undefined ? { title } : {}),
        ...(annotations !== undefined ? { annotations } : {}),
        ...(output_schema !== undefined ? { output_schema } : {}),
      })),
      servers: sessions.map((s) => {
        const info = s.runtimeInfo();
        return { name: s.name, status: info.status, error_phase: info.error_phase, error_message: info.error_message, error_code: info.error_code };
      }),
      warnings,
    };
  } finally {
    await Promise.allSettled(sessions.map((s) => s.close()));
    await manager.close();
  }
}

/** `mcp call NAME TOOL --args JSON`: one call through a short-lived session (the server's own tool name). */
export async function callTool(ctx: AdminContext, name: string, tool: string, args: JsonObject): Promise<{ server: string; tool: string; result: unknown }> {
  const record = findRecord(ctx.configFile.config, name);
  const settings = readMcpConfig(ctx.configFile.config).settings;
  const manager = transientManager(ctx);
  const session = manager.createSession({ ...record, enabled: true }, true, ctx.elicitation);
  try {
    await session.start();
    if (session.status !== 'connected') {
      const info = session.runtimeInfo();
      if (info.error_code === 'mcp.auth_required' || info.error_code === 'mcp.auth_failed') {
        throw new LbotError(info.error_code, info.error_message ?? `MCP server ${name} requires authorization`, {
          details: { name, error_phase: info.error_phase },
          ...(info.error_hint ? { hint: info.error_hint } : {}),
        });
      }
      throw new LbotError('mcp.connect_failed', `cannot connect to MCP server ${name}: ${info.error_message ?? info.status}`, {
        details: { name, error_phase: info.error_phase, retry_count: info.retry_count },
      });
    }
    try {
      const result = await session.callTool(tool, args, { timeoutMs: settings.call_timeout_sec * 1000 });
      return { server: name, tool, result };
    } catch (err) {
      if (err instanceof McpCallError && err.cause instanceof LbotError && err.failure === 'unauthorized') throw err.cause;
      if (err instanceof McpCallError) {
        throw new LbotError(err.failure === 'timeout' ? 'deadline_exceeded' : 'runtime_error', err.message, {
          details: { phase: 'tool_call', server: name, tool, failure: err.failure },
        });
      }
      throw err;
    }
  } finally {
    await session.close();
    await manager.close();
  }
}

/** `mcp login NAME`: the OAuth flow (oauth-login.ts), then a test connection with the new token. */
export async function loginServer(ctx: AdminContext, name: string, opts: Omit<LoginOptions, 'dataDir'>): Promise<{ login: LoginResult; test: TestResult }> {
  const record = findRecord(ctx.configFile.config, name);
  const result = await login(record, { ...opts, dataDir: ctx.dataDir });
  return { login: result, test: await testServer(ctx, name) };
}

/** `mcp logout NAME`. */
export function logoutServer(ctx: AdminContext, name: string): { name: string; removed: boolean } {
  return logout(findRecord(ctx.configFile.config, name), ctx.dataDir);
}
