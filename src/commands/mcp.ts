// `lbot mcp …`: register, inspect, test and call MCP servers, and bridge a live run to an external MCP client (docs/mcp.md).
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import { isErrorCode } from '../core/error-table.js';
import { isRecord } from '../core/json.js';
import { parseJsonText } from '../core/json-parse.js';
import type { AdminContext, ServerSummary, TestResult, ToolListing } from '../runtime/mcp/admin.js';
import { EXIT } from './shared/exit-codes.js';
import { collect, parseFlags, parseKeyValues } from './shared/flags.js';
import type { CliContext } from './shared/context.js';
import type { GetContext } from './shared/context.js';
import * as shapes from '../core/shapes/index.js';
import { fields, indent, localIso, table } from './shared/table.js';

const AddFlagsSchema = z.object({
  env: z.array(z.string()).default([]),
  header: z.array(z.string()).default([]),
  inBox: z.boolean().default(false),
  url: z.string().optional(),
  transport: z.string().optional(),
  description: z.string().optional(),
  cwd: z.string().optional(),
  disabled: z.boolean().default(false),
  root: z.array(z.string()).default([]),
  oauthGrant: z.enum(['authorization_code', 'client_credentials']).optional(),
  oauthClientId: z.string().optional(),
  oauthClientSecret: z.string().optional(),
  oauthPrivateKeyFile: z.string().optional(),
  oauthSigningAlg: z.string().optional(),
  oauthScope: z.string().optional(),
  oauthClientMetadataUrl: z.string().optional(),
  samplingModel: z.string().min(1).optional(),
});
const ElicitFlagSchema = z.enum(['prompt', 'defaults', 'decline']).optional();
const CallFlagsSchema = z.object({ args: z.string().default('{}'), elicit: ElicitFlagSchema });
const UserFlagsSchema = z.object({ elicit: ElicitFlagSchema });
const LoginFlagsSchema = z.object({ browser: z.boolean().default(true), timeout: z.coerce.number().positive().default(300) });
const BridgeFlagsSchema = z.object({ run: z.string().min(1, 'give the run id: --run RUN_ID'), socket: z.string().optional() });

/** A server's request for input is asked on a terminal, else refused unless --elicit says otherwise. */
async function elicitation(flag: z.infer<typeof ElicitFlagSchema>): Promise<AdminContext['elicitation']> {
  const mode = flag ?? (process.stdin.isTTY && process.stderr.isTTY ? 'prompt' : 'decline');
  if (mode !== 'prompt') return { elicitation: mode };
  const { terminalPrompt } = await import('../runtime/mcp/elicit-prompt.js');
  return { elicitation: 'prompt', prompt: terminalPrompt };
}

async function adminContext(ctx: CliContext, elicit?: z.infer<typeof ElicitFlagSchema>): Promise<AdminContext> {
  const { createBoxConnector } = await import('../runtime/mcp/box-connector.js');
  const config = ctx.configFile().config;
  return {
    dataDir: ctx.flags.dataDir,
    configFile: ctx.configFile(),
    warn: (m) => ctx.output.warn(m),
    boxConnector: createBoxConnector({ dataDir: ctx.flags.dataDir, config: config.box, owner: 'cli', warn: (m) => ctx.output.warn(m) }),
    elicitation: await elicitation(elicit),
  };
}

/** A failed authorization exits like the error it is (4), other failed connections as unavailable (6). */
function failureExit(code: string | null): number {
  return code === 'mcp.auth_required' || code === 'mcp.auth_failed' ? EXIT.denied : EXIT.unavailable;
}

const admin = () => import('../runtime/mcp/admin.js');

const serverDown = (s: ToolListing['servers'][number]) => `${s.name}: ${s.status}${s.error_message ? ` [${s.error_phase ?? ''}] ${s.error_message}` : ''}`;

/**
 * A failed test is an error like any other: the report on stdout in text mode, the `lbot: error[…]` line,
 * and with --json the error envelope with the report as `details.test`. Returns the exit code.
 */
function reportFailedTest(ctx: CliContext, r: TestResult): number {
  ctx.output.text(renderTest(r));
  const code = r.error_code !== null && isErrorCode(r.error_code) ? r.error_code : 'mcp.connect_failed';
  const err = new LbotError(code, `MCP server ${r.name}: ${r.error_message ?? r.status}`, {
    details: { test: r },
    ...(r.hint ? { hint: r.hint } : {}),
  });
  return ctx.output.error(err, failureExit(r.error_code));
}

const statusText = (s: ServerSummary) => s.status + (s.error_phase ? ` [${s.error_phase}] ${s.error_message ?? ''}` : '');

function renderList(servers: readonly ServerSummary[]): string {
  if (servers.length === 0) return 'no MCP servers configured (add one with lbot mcp add NAME -- CMD…)';
  return table([
    ['NAME', 'MODE', 'STATUS', 'TOOLS', 'RETRIES', 'TARGET'],
    ...servers.map((s) => [s.name, s.mode, statusText(s), String(s.tool_count), String(s.retry_count), (s.in_box ? '(in box) ' : '') + s.target]),
  ]);
}

/** `mcp show` for a person: the live summary, then the stored record (secrets already masked) in local time. */
function renderShow(v: { server: Record<string, unknown>; runtime_info: Record<string, unknown> | null; status: ServerSummary }): string {
  const s = v.status;
  const when = (x: unknown) => (typeof x === 'string' ? localIso(x) : '-');
  const summary = fields([
    ['name', s.name],
    ['enabled', String(s.enabled)],
    ['mode', s.mode + (s.in_box ? ' (in box)' : '')],
    ['target', s.target],
    ['status', statusText(s)],
    ['tools', String(s.tool_count)],
    ['pid', s.pid === null ? '-' : String(s.pid)],
    ['created', when(v.server.created_at)],
    ['updated', when(v.server.updated_at)],
  ]);
  const { created_at: _c, updated_at: _u, name: _n, ...rest } = v.server;
  const out = [summary, '', 'config:', indent(JSON.stringify(rest, null, 2))];
  if (v.runtime_info) out.push('', 'runtime:', indent(JSON.stringify(v.runtime_info, null, 2)));
  return out.join('\n');
}

function renderTest(r: TestResult): string {
  const lines = [`${r.name}: ${r.status}${r.retry_count ? ` after ${r.retry_count} failed attempt(s)` : ''}`];
  if (r.server_info) lines.push(`  server: ${r.server_info.name} ${r.server_info.version}`);
  if (r.ok) lines.push(`  tools: ${r.tools.join(', ') || '(none)'}`);
  if (r.error_message) lines.push(`  error[${r.error_code ?? r.error_phase ?? 'unknown'}]: ${r.error_message}`);
  lines.push(`  timings: connect ${r.timings.connect_ms ?? '-'} ms, list tools ${r.timings.list_tools_ms ?? '-'} ms, total ${r.timings.total_ms} ms`);
  return lines.join('\n');
}

function renderTools(v: ToolListing): string {
  const lines = v.tools.map((t) => `${t.name}${t.name !== t.tool ? ` (${t.server}: ${t.tool})` : ` (${t.server})`}  ${t.description.split('\n')[0] ?? ''}`);
  for (const s of v.servers)
    if (s.status !== 'connected') lines.push(`# ${s.name}: ${s.status}${s.error_message ? ` [${s.error_phase ?? ''}] ${s.error_message}` : ''}`);
  return lines.length > 0 ? lines.join('\n') : 'no tools (no enabled MCP server)';
}

function parseArgsJson(text: string): Record<string, unknown> {
  const value = parseJsonText(text, '--args', 'invalid_argument');
  if (!isRecord(value)) throw new LbotError('invalid_argument', '--args must be a JSON object, e.g. --args \'{"text":"hi"}\'');
  return value;
}

// Over 100 lines because it is the command table of `lbot mcp`: one registration per subcommand, each
// parsing flags and calling runtime/mcp; the logic lives there.
export function registerMcp(program: Command, getCtx: GetContext): void {
  const mcp = program.command('mcp').description('Manage MCP servers whose tools runs may be granted');

  mcp
    .command('add <name> [command...]')
    .description('register a server: a stdio command after --, or --url URL --transport sse|http')
    .option('--env <K=V>', 'environment variable of a stdio server (repeatable; values are never printed)', collect)
    .option('--header <K=V>', 'HTTP header of a remote server (repeatable; values are never printed)', collect)
    .option('--in-box', 'run the stdio server as a managed process inside the box sandbox')
    .option('--url <url>', 'URL of a remote server')
    .option('--transport <transport>', 'stdio (default with a command), sse or http (default with --url)')
    .option('--description <text>', 'a note shown by mcp show')
    .option('--cwd <dir>', 'working directory of a host stdio server')
    .option('--disabled', 'register without enabling it')
    .option('--root <dir>', 'directory offered to the server as an MCP root (repeatable)', collect)
    .option('--oauth-grant <grant>', 'authorization_code (default: lbot mcp login) or client_credentials')
    .option('--oauth-client-id <id>', 'a pre-registered OAuth client (otherwise lbot registers itself)')
    .option('--oauth-client-secret <secret>', 'its secret (never printed)')
    .option('--oauth-private-key-file <pem>', 'private key for private_key_jwt client authentication')
    .option('--oauth-signing-alg <alg>', 'its JWS algorithm (default RS256)')
    .option('--oauth-scope <scope>', 'scope to ask for when the server names none')
    .option('--oauth-client-metadata-url <url>', "https URL of lbot's client metadata document, used as client_id where supported")
    .option('--sampling-model <id>', 'a configured model the server may use for sampling (refused without one)')
    .action(async (name: string, command: string[], raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(AddFlagsSchema, raw);
      const oauth = {
        ...(flags.oauthGrant ? { grant: flags.oauthGrant } : {}),
        ...(flags.oauthClientId ? { client_id: flags.oauthClientId } : {}),
        ...(flags.oauthClientSecret ? { client_secret: flags.oauthClientSecret } : {}),
        ...(flags.oauthPrivateKeyFile ? { private_key_file: flags.oauthPrivateKeyFile } : {}),
        ...(flags.oauthSigningAlg ? { signing_alg: flags.oauthSigningAlg } : {}),
        ...(flags.oauthScope ? { scope: flags.oauthScope } : {}),
        ...(flags.oauthClientMetadataUrl ? { client_metadata_url: flags.oauthClientMetadataUrl } : {}),
      };
      const { addServer } = await admin();
      const server = await addServer(await adminContext(ctx), {
        name,
        command,
        url: flags.url,
        transport: flags.transport,
        env: parseKeyValues(flags.env, '--env'),
        headers: parseKeyValues(flags.header, '--header'),
        inBox: flags.inBox,
        description: flags.description,
        cwd: flags.cwd,
        disabled: flags.disabled,
        oauth,
        roots: flags.root,
        samplingModel: flags.samplingModel,
      });
      ctx.output.item(shapes.McpServerConfig, server, () => `added MCP server ${name} (test it with lbot mcp test ${name})`);
    });

  mcp
    .command('list')
    .description('configured servers with the live state of a running lbot serve / lbot run')
    .action(async () => {
      const ctx = getCtx();
      const { listServers } = await admin();
      ctx.output.list(shapes.McpServer, listServers(await adminContext(ctx)).servers, renderList);
    });

  mcp
    .command('show <name>')
    .description('one server: its config (secrets masked) and live runtime info')
    .action(async (name: string) => {
      const ctx = getCtx();
      const { showServer } = await admin();
      ctx.output.item(shapes.McpServerDetail, showServer(await adminContext(ctx), name), renderShow);
    });

  mcp
    .command('test <name>')
    .description('connect (with the retry policy), list the tools, print timings, disconnect')
    .option('--elicit <mode>', 'answer a request for input: prompt (default on a terminal), defaults, decline (default otherwise)')
    .action(async (name: string, raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(UserFlagsSchema, raw);
      const { testServer } = await admin();
      const result = await testServer(await adminContext(ctx, flags.elicit), name);
      if (result.ok) ctx.output.item(shapes.McpTest, result, renderTest);
      else ctx.exitCode = reportFailedTest(ctx, result);
    });

  mcp
    .command('tools [name]')
    .description('the tools of the enabled servers (or of one), under the names runs see')
    .option('--elicit <mode>', 'answer a request for input: prompt, defaults, decline')
    .action(async (name: string | undefined, raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(UserFlagsSchema, raw);
      const { listTools } = await admin();
      const listing = await listTools(await adminContext(ctx, flags.elicit), name);
      for (const w of listing.warnings) ctx.output.warn(w);
      // The named server must have connected; without a name, a listing of what is up is the answer.
      const named = name ? listing.servers.find((s) => s.name === name) : undefined;
      if (named && named.status !== 'connected') {
        const code = named.error_code !== null && isErrorCode(named.error_code) ? named.error_code : 'mcp.connect_failed';
        ctx.exitCode = ctx.output.error(new LbotError(code, `MCP server ${serverDown(named)}`, { details: { server: named } }), failureExit(named.error_code));
        return;
      }
      ctx.output.list(shapes.McpTool, listing.tools, () => renderTools(listing));
      if (ctx.output.json) for (const s of listing.servers) if (s.status !== 'connected') ctx.output.warn(serverDown(s));
    });

  mcp
    .command('call <name> <tool>')
    .description("call one tool by the server's own name: --args JSON")
    .option('--args <json>', 'the arguments object', '{}')
    .option('--elicit <mode>', 'answer a request for input: prompt (default on a terminal), defaults, decline (default otherwise)')
    .action(async (name: string, tool: string, raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(CallFlagsSchema, raw);
      const { callTool } = await admin();
      const out = await callTool(await adminContext(ctx, flags.elicit), name, tool, parseArgsJson(flags.args));
      ctx.output.item(shapes.McpCall, out, (v) => {
        const items = Array.isArray(v.result) ? v.result : [];
        return items.map((i) => (isRecord(i) && typeof i.text === 'string' ? i.text : JSON.stringify(i))).join('\n');
      });
    });

  for (const [verb, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    mcp
      .command(`${verb} <name>`)
      .description(`${verb} a server (a running lbot serve follows within a second)`)
      .action(async (name: string) => {
        const ctx = getCtx();
        const { setEnabled } = await admin();
        ctx.output.item(shapes.McpServer, await setEnabled(await adminContext(ctx), name, enabled), () => `${verb}d MCP server ${name}`);
      });
  }

  mcp
    .command('login <name>')
    .description('authorize lbot with OAuth for a remote server: prints the URL, waits on a loopback redirect, stores the tokens')
    .option('--no-browser', 'only print the URL (headless machines)')
    .option('--timeout <sec>', 'how long to wait for the browser to come back', '300')
    .action(async (name: string, raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(LoginFlagsSchema, raw);
      const { loginServer } = await admin();
      const out = await loginServer(await adminContext(ctx), name, {
        openBrowser: flags.browser,
        timeoutMs: flags.timeout * 1000,
        say: (line) => process.stderr.write(`${line}\n`),
      });
      const authorized = `${out.login.name}: authorized${out.login.scope ? ` (scope ${out.login.scope})` : ''}`;
      if (out.test.ok) ctx.output.item(shapes.McpLogin, out, (v) => `${authorized}\n${renderTest(v.test)}`);
      else {
        ctx.output.notice(authorized);
        ctx.exitCode = reportFailedTest(ctx, out.test);
      }
    });

  mcp
    .command('logout <name>')
    .description("forget a remote server's stored OAuth tokens and registration")
    .action(async (name: string) => {
      const ctx = getCtx();
      const { logoutServer } = await admin();
      const out = logoutServer(await adminContext(ctx), name);
      ctx.output.item(shapes.McpLogout, out, (v) => (v.removed ? `logged out of MCP server ${name}` : `no stored authorization for MCP server ${name}`));
    });

  mcp
    .command('remove <name>')
    .description('unregister a server (a running lbot serve stops it)')
    .action(async (name: string) => {
      const ctx = getCtx();
      const { removeServer } = await admin();
      ctx.output.item(shapes.Removed, { ok: true, removed: (await removeServer(await adminContext(ctx), name)).removed }, () => `removed MCP server ${name}`);
    });

  mcp
    .command('bridge')
    .description("serve a live run's host API as MCP tools on stdio, for an external agent harness (token from LBOT_BRIDGE_TOKEN)")
    .option('--run <run_id>', 'the live run to bridge')
    .option('--socket <path>', 'the host bridge socket (default LBOT_BRIDGE_SOCKET)')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(BridgeFlagsSchema, raw);
      const { runBridgeClient } = await import('../runtime/mcp/bridge-client.js');
      await runBridgeClient({
        runId: flags.run,
        socket: flags.socket ?? process.env.LBOT_BRIDGE_SOCKET,
        token: process.env.LBOT_BRIDGE_TOKEN,
        warn: (m) => ctx.output.warn(m),
      });
    });
}
