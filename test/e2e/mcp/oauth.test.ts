// `lbot mcp login` through the built CLI against a strict loopback OAuth authorization server
// (test/helpers/mcp-oauth-server.ts): the browser leg is played by the test, which reads the URL that
// `--no-browser` prints and follows it as a browser would. The token is stored once and reused by
// later processes, refreshed by the process that finds it expired, and `lbot mcp test` connects with no
// header configured. The remote-server defects are pinned here too: the 401 hint comes from the HTTP
// status, a 401 is tried once, `mcp tools NAME` fails when NAME did not connect, and a normal close
// prints no "SSE stream disconnected" warning.
import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { startOAuthFixture, type OAuthFixture, type Protection } from '../../helpers/mcp-oauth-server.js';
import { LBOT_BIN } from '../../helpers/serve.js';
import { pick } from '../host/harness.js';

type Env = { dataDir: string; as: OAuthFixture };
const open: Env[] = [];

afterEach(async () => {
  for (const e of open.splice(0)) {
    await e.as.close();
    await rm(e.dataDir, { recursive: true, force: true });
  }
});

async function setup(protection?: Protection, headers: string[] = []): Promise<Env> {
  const env: Env = { dataDir: await mkdtemp(path.join(os.tmpdir(), 'lbot-mcp-oauth-')), as: await startOAuthFixture(protection) };
  open.push(env);
  const add = await lbot(env, ['mcp', 'add', 'srv', '--url', env.as.url, ...headers.flatMap((h) => ['--header', h])]);
  expect(add.exitCode, add.stderr).toBe(0);
  return env;
}

function lbot(env: Env, args: string[]) {
  return execa(process.execPath, [LBOT_BIN, '--data-dir', env.dataDir, '--json', ...args], { reject: false, env: { NO_COLOR: '1' }, timeout: 120_000 });
}

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').filter(Boolean).at(-1) ?? '{}') as Record<string, unknown>;

/** Waits until the running login printed its authorization URL. */
async function printedUrl(child: ResultPromise, timeoutMs = 60_000): Promise<URL> {
  let seen = '';
  return new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no authorization URL printed within ${timeoutMs} ms:\n${seen}`)), timeoutMs);
    child.stderr?.on('data', (d: Buffer) => {
      seen += d.toString('utf8');
      const m = /Open this URL[^\n]*\n\s*\n\s*(\S+)/.exec(seen);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(new URL(m[1]));
      }
    });
  });
}

/** The browser: follows redirects from the authorization URL until a page answers; returns that answer. */
async function browse(start: URL): Promise<{ status: number; url: string; body: string }> {
  let next = start.href;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(next, { redirect: 'manual' });
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      next = new URL(location, next).href;
      continue;
    }
    return { status: res.status, url: next, body: await res.text() };
  }
  throw new Error('too many redirects');
}

async function login(env: Env): Promise<Awaited<ReturnType<typeof lbot>>> {
  const child = lbot(env, ['mcp', 'login', 'srv', '--no-browser', '--timeout', '120']);
  const url = await printedUrl(child);
  expect(url.origin).toBe(env.as.issuer);
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  expect(url.searchParams.get('resource')).toBe(env.as.url);
  const redirect = new URL(url.searchParams.get('redirect_uri') ?? '');
  expect(redirect.hostname).toBe('127.0.0.1');
  // A forged callback (another state) is turned away and the login keeps waiting for the real one.
  const forged = await fetch(`${redirect.href}?code=forged&state=not-this-login`);
  expect(forged.status).toBe(400);
  const landed = await browse(url);
  expect(landed.status, landed.body).toBe(200);
  expect(landed.url.startsWith(redirect.href)).toBe(true);
  return child;
}

describe('[oauth] lbot mcp login against a loopback authorization server', () => {
  it('logs in once, reuses the stored token in later processes, refreshes it after it expires, and connects with no header', async () => {
    const env = await setup({ kind: 'oauth', accessTtlSec: 600 });

    const before = await lbot(env, ['mcp', 'test', 'srv']);
    expect(before.exitCode, before.stderr).toBe(4);
    expect(lastJson(before.stdout)).toMatchObject({
      ok: false,
      error: { code: 'mcp.auth_required', details: { test: { ok: false, error_code: 'mcp.auth_required', hint: 'run lbot mcp login srv' } } },
    });
    expect(env.as.counts.register).toBe(0);

    const done = await login(env);
    expect(done.exitCode, done.stderr).toBe(0);
    expect(lastJson(done.stdout)).toMatchObject({ login: { name: 'srv', scope: 'mcp:tools' }, test: { ok: true, tools: ['whoami'] } });
    expect(env.as.counts).toMatchObject({ register: 1, authorize: 1, code_grants: 1, refresh_grants: 0 });
    const file = path.join(env.dataDir, 'mcp', 'oauth', 'srv.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const issued = env.as.accepted.at(-1);

    // A second process: the stored token, no new grant; listings keep title, annotations and outputSchema.
    const tools = await lbot(env, ['mcp', 'tools', 'srv']);
    expect(tools.exitCode, tools.stderr).toBe(0);
    expect(lastJson(tools.stdout)).toMatchObject([
      {
        name: 'whoami',
        title: 'Who am I',
        annotations: { readOnlyHint: true, idempotentHint: true },
        output_schema: { type: 'object', required: ['client_id'] },
      },
    ]);
    expect(env.as.accepted.at(-1)).toBe(issued);
    expect(env.as.counts).toMatchObject({ code_grants: 1, refresh_grants: 0 });

    // The access token expires; the next process refreshes it (rotating the refresh token) and calls.
    env.as.advance(601_000);
    const call = await lbot(env, ['mcp', 'call', 'srv', 'whoami']);
    expect(call.exitCode, call.stderr).toBe(0);
    const result = lastJson(call.stdout).result as Array<Record<string, unknown>>;
    expect(result[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^client client_/) });
    // structuredContent is kept next to the text.
    expect(result).toContainEqual({ type: 'structured_content', structured_content: { client_id: expect.stringMatching(/^client_/) } });
    expect(env.as.counts).toMatchObject({ code_grants: 1, refresh_grants: 1 });
    const refreshed = env.as.accepted.at(-1);
    expect(refreshed).not.toBe(issued);

    // The process after that uses the refreshed token as stored: no grant of any kind, no header configured.
    const again = await lbot(env, ['mcp', 'test', 'srv']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(env.as.accepted.at(-1)).toBe(refreshed);
    expect(env.as.counts).toMatchObject({ register: 1, code_grants: 1, refresh_grants: 1 });
    const show = lastJson((await lbot(env, ['mcp', 'show', 'srv'])).stdout) as { server: { headers: Record<string, string> } };
    expect(show.server.headers).toEqual({});

    // Nothing lbot sent had to be refused: PKCE S256, redirect_uri, client_id and resource were right on every leg.
    expect(env.as.refusals).toEqual([]);

    const out = await lbot(env, ['mcp', 'logout', 'srv']);
    expect(lastJson(out.stdout)).toMatchObject({ name: 'srv', removed: true });
    const after = await lbot(env, ['mcp', 'test', 'srv']);
    expect(after.exitCode).toBe(4);
    expect(lastJson(after.stdout)).toMatchObject({ error: { code: 'mcp.auth_required', details: { test: { error_code: 'mcp.auth_required' } } } });
  });
});

describe('[oauth] remote-server defects', () => {
  it('a 401 to a static Authorization header is named from the HTTP status (the body says nothing) and tried once', async () => {
    const env = await setup({ kind: 'header', name: 'authorization', value: 'Bearer right', body: 'access denied' }, ['Authorization=Bearer wrong']);
    const r = await lbot(env, ['mcp', 'test', 'srv']);
    expect(r.exitCode, r.stderr).toBe(4);
    const envelope = lastJson(r.stdout);
    expect(envelope).toMatchObject({ ok: false, error: { code: 'mcp.auth_failed' } });
    const json = pick(envelope, 'error.details.test') as Record<string, unknown>;
    expect(json).toMatchObject({ ok: false, error_code: 'mcp.auth_failed', retry_count: 1 });
    expect(String(json.error_message)).toContain('HTTP 401');
    expect(String(json.hint)).toContain('--header');
    // One attempt: the initialize POST that got the 401, no retries 2, 4 and 8 s later.
    expect(env.as.counts.mcp_unauthorized).toBe(1);
  });

  it('lbot mcp tools NAME exits with the failure of NAME when it did not connect', async () => {
    const env = await setup({ kind: 'oauth' });
    const r = await lbot(env, ['mcp', 'tools', 'srv']);
    expect(r.exitCode, r.stderr).toBe(4);
    expect(lastJson(r.stdout)).toMatchObject({
      ok: false,
      error: { code: 'mcp.auth_required', details: { server: { name: 'srv', status: 'error', error_code: 'mcp.auth_required' } } },
    });
  });

  it('a normal close of a Streamable HTTP session prints no SSE disconnect warning', async () => {
    const env = await setup({ kind: 'none' });
    for (const args of [
      ['mcp', 'test', 'srv'],
      ['mcp', 'call', 'srv', 'whoami'],
    ]) {
      const r = await lbot(env, args);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/SSE stream disconnected|AbortError/);
    }
  });
});
