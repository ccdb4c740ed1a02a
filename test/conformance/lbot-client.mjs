#!/usr/bin/env node
// The MCP conformance suite's client under test: lbot itself, driven the way a user drives it.
// `conformance client --command "node lbot-client.mjs"` appends the scenario's server URL and sets
// MCP_CONFORMANCE_SCENARIO / MCP_CONFORMANCE_CONTEXT. This script runs the built CLI in a fresh data
// dir: `mcp add --url`, `mcp test`, `mcp tools`, `mcp call`. When a command answers
// mcp.auth_required it runs the command the error names (`lbot mcp login NAME --no-browser`) and
// plays the browser: it opens the printed URL and follows its redirects to lbot's loopback listener.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const LBOT = fileURLToPath(new URL('../../bin/lbot.js', import.meta.url));
/** lbot's client metadata document as a user would host it (servers that support CIMD take it as client_id). */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const NAME = 'conf';
const MAX_LOGINS_PER_STEP = 2;

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
const dataDir = mkdtempSync(path.join(tmpdir(), 'lbot-conformance-'));

const log = (line) => process.stderr.write(`[lbot-client] ${line}\n`);

/** Runs `lbot --data-dir D --json ARGS`; `onStderr` sees stderr as it arrives. */
function lbot(args, onStderr) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [LBOT, '--data-dir', dataDir, '--json', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      onStderr?.(stderr);
    });
    child.on('close', (code) => {
      log(`lbot ${args.join(' ')} → exit ${code}`);
      if (stderr.trim()) log(stderr.trim());
      resolve({ code, stdout, stderr });
    });
  });
}

/** The browser: follows redirects from the authorization URL until lbot's loopback page answers. */
async function browse(start) {
  let next = start;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(next, { redirect: 'manual' });
    const location = res.headers.get('location');
    await res.body?.cancel();
    if (res.status < 300 || res.status >= 400 || !location) return;
    next = new URL(location, next).href;
  }
}

async function login() {
  let opened = false;
  return lbot(['mcp', 'login', NAME, '--no-browser', '--timeout', '60'], (stderr) => {
    const m = /Open this URL[^\n]*\n\s*\n\s*(\S+)/.exec(stderr);
    if (m && !opened) {
      opened = true;
      browse(m[1]).catch((err) => log(`browser: ${err.message}`));
    }
  });
}

const authRequired = (r) => r.code === 4 && `${r.stdout}${r.stderr}`.includes('mcp.auth_required');

/** One user step: run it; on mcp.auth_required log in as told and run it again. */
async function step(args) {
  let r = await lbot(args);
  for (let i = 0; i < MAX_LOGINS_PER_STEP && authRequired(r); i++) {
    const l = await login();
    if (l.code !== 0 && !authRequired(l)) return l;
    // A login ends with the connection `mcp test` makes; its result stands for the test it unblocked.
    if (l.code === 0 && args[1] === 'test') return l;
    r = await lbot(args);
  }
  return r;
}

/** Arguments for a tool from its input schema: 1 for numbers, "x" for strings, true for booleans. */
function sampleArgs(schema) {
  const out = {};
  for (const [k, p] of Object.entries(schema?.properties ?? {})) {
    if (!(schema.required ?? []).includes(k)) continue;
    out[k] = p.type === 'number' || p.type === 'integer' ? 1 : p.type === 'boolean' ? true : 'x';
  }
  return out;
}

function addArgs() {
  const args = ['mcp', 'add', NAME, '--url', url, '--oauth-client-metadata-url', CLIENT_METADATA_URL];
  if (context.private_key_pem) {
    const key = path.join(dataDir, 'client-key.pem');
    writeFileSync(key, context.private_key_pem, { mode: 0o600 });
    args.push(
      '--oauth-grant',
      'client_credentials',
      '--oauth-client-id',
      context.client_id,
      '--oauth-private-key-file',
      key,
      '--oauth-signing-alg',
      context.signing_algorithm ?? 'ES256',
    );
  } else if (context.client_id && scenario.startsWith('auth/client-credentials')) {
    args.push('--oauth-grant', 'client_credentials', '--oauth-client-id', context.client_id, '--oauth-client-secret', context.client_secret);
  } else if (context.client_id) {
    args.push('--oauth-client-id', context.client_id, ...(context.client_secret ? ['--oauth-client-secret', context.client_secret] : []));
  }
  return args;
}

async function main() {
  log(`scenario ${scenario} at ${url}`);
  if ((await lbot(addArgs())).code !== 0) return 1;
  const test = await step(['mcp', 'test', NAME]);
  if (test.code !== 0) return test.code ?? 1;
  const tools = await step(['mcp', 'tools', NAME]);
  if (tools.code !== 0) return tools.code ?? 1;
  const listing = JSON.parse(tools.stdout); // an McpTool array
  const tool = listing.find((t) => t.server === NAME);
  if (!tool) return 0;
  const call = await step(['mcp', 'call', NAME, tool.tool, '--args', JSON.stringify(sampleArgs(tool.parameters)), '--elicit', 'defaults']);
  return call.code ?? 1;
}

const code = await main().catch((err) => {
  log(String(err?.stack ?? err));
  return 1;
});
rmSync(dataDir, { recursive: true, force: true });
process.exit(code);
