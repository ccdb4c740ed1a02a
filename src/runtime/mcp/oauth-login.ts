// `lbot mcp login NAME`: the OAuth browser flow for one remote server. lbot listens on a loopback
// redirect (127.0.0.1, RFC 8252), prints the authorization URL (and opens a browser unless told not
// to), exchanges the code through the SDK's `auth()` and stores the tokens for every later process.
// Client-credentials servers get their token at once, with no browser. `logout` forgets it all.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { LbotError } from '../../core/errors.js';
import type { McpServerRecord } from './config.js';
import { printable } from './client-capabilities.js';
import { LbotOAuthProvider, recordChallenges, unionScopes } from './oauth-provider.js';
import { OAuthStore } from './oauth-store.js';
import { withTimeout } from '../process/timeout.js';

export type LoginOptions = {
  dataDir: string;
  /** Open the system browser on the authorization URL (`--no-browser` turns it off). */
  openBrowser: boolean;
  /** How long to wait for the browser to come back. */
  timeoutMs: number;
  /** Where the URL and progress go (stderr). */
  say(line: string): void;
};

export type LoginResult = { name: string; grant: McpServerRecord['oauth']['grant']; scope: string | null; browser: boolean };

const CALLBACK_PATH = '/callback';
const PAGE = (text: string) => `<!doctype html><meta charset="utf-8"><title>lbot</title><p>${text}</p>`;

function remoteUrl(record: McpServerRecord): string {
  if (record.transport === 'stdio' || !record.url) {
    throw new LbotError('mcp.invalid_config', `MCP server ${record.name} is a stdio server: OAuth applies to remote (--url) servers only`);
  }
  if (Object.keys(record.headers).some((k) => k.toLowerCase() === 'authorization')) {
    throw new LbotError('mcp.invalid_config', `MCP server ${record.name} has a static Authorization header; OAuth is not used while it is set`, {
      hint: `lbot mcp remove ${record.name} and add it again without --header Authorization=…`,
    });
  }
  return record.url;
}

/** The loopback listener the authorization server redirects the browser to. */
async function listenForCode(state: string, preferredPort: number | null): Promise<{ redirectUrl: string; code: Promise<string>; close(): void }> {
  let settle!: { resolve(code: string): void; reject(err: Error): void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    // A request without this login's state is not the authorization server's answer (CSRF): ignored.
    if (url.searchParams.get('state') !== state) {
      res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE('This is not the answer to the current lbot login (state mismatch).'));
      return;
    }
    const error = url.searchParams.get('error');
    const got = url.searchParams.get('code');
    if (error || !got) {
      const why = printable(`${error ?? 'no code'}${url.searchParams.get('error_description') ? `: ${url.searchParams.get('error_description')}` : ''}`, 300);
      res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE('lbot: authorization failed. You can close this tab.'));
      settle.reject(new LbotError('mcp.auth_failed', `the authorization server refused: ${why}`));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE('lbot is authorized. You can close this tab.'));
    settle.resolve(got);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  try {
    await listen(preferredPort ?? 0);
  } catch {
    await listen(0);
  }
  const { port } = server.address() as AddressInfo;
  return { redirectUrl: `http://127.0.0.1:${port}${CALLBACK_PATH}`, code, close: () => server.close() };
}

function openInBrowser(url: URL, say: (line: string) => void): void {
  const [cmd, ...args] =
    process.platform === 'darwin' ? ['open', url.href] : process.platform === 'win32' ? ['cmd', '/c', 'start', '""', url.href] : ['xdg-open', url.href];
  try {
    const child = spawn(cmd ?? 'xdg-open', args, { stdio: 'ignore', detached: true });
    child.on('error', () => say('(no browser could be opened: open the URL above yourself)'));
    child.unref();
  } catch {
    say('(no browser could be opened: open the URL above yourself)');
  }
}

/** The port of the redirect URI lbot registered before, so a dynamic registration stays valid. */
function registeredPort(store: OAuthStore): number | null {
  const uri = store.clientInformation()?.redirect_uris[0];
  if (!uri) return null;
  const u = new URL(uri);
  return u.hostname === '127.0.0.1' && u.port ? Number(u.port) : null;
}

export async function login(record: McpServerRecord, opts: LoginOptions): Promise<LoginResult> {
  const url = remoteUrl(record);
  const store = new OAuthStore(opts.dataDir, record.name, url);
  const fetchFn = recordChallenges(store, url);
  // What the server asked for last (a 401, or a step-up 403); without it, ask it now.
  if (!store.read().challenge) {
    const probe = await fetchFn(url, {
      method: 'POST',
      headers: { ...record.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tools/list', params: {} }),
    }).catch(() => null);
    await probe?.body?.cancel().catch(() => undefined);
  }
  const challenge = store.read().challenge;
  const scope = challenge?.insufficient_scope ? unionScopes(store.read().granted_scope, challenge.scope) : challenge?.scope;
  const resourceMetadataUrl = challenge?.resource_metadata_url ? new URL(challenge.resource_metadata_url) : undefined;
  const state = randomBytes(24).toString('base64url');
  const loopback = record.oauth.grant === 'authorization_code' ? await listenForCode(state, registeredPort(store)) : null;
  let browser = false;
  try {
    const provider = new LbotOAuthProvider(record, store, {
      kind: 'login',
      redirectUrl: loopback?.redirectUrl ?? 'http://127.0.0.1/callback',
      state,
      sendUser: async (authorizationUrl) => {
        if (authorizationUrl.protocol !== 'https:' && authorizationUrl.protocol !== 'http:') {
          throw new LbotError(
            'mcp.auth_failed',
            `MCP server ${record.name}: the authorization server gave a ${authorizationUrl.protocol} URL; only http(s) is opened`,
          );
        }
        browser = true;
        opts.say(
          `Open this URL to authorize lbot for MCP server ${record.name}:\n\n  ${authorizationUrl.href}\n\nWaiting for the redirect to ${loopback?.redirectUrl ?? ''} …`,
        );
        if (opts.openBrowser) openInBrowser(authorizationUrl, opts.say);
      },
    });
    // A registration made for another redirect port is not reused: lbot registers again.
    const registered = store.clientInformation();
    if (registered && loopback && !registered.redirect_uris.includes(loopback.redirectUrl)) provider.invalidateCredentials('client');
    const base = { serverUrl: url, fetchFn, ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}) };
    let result = await auth(provider, { ...base, ...(scope ? { scope } : {}) });
    if (result === 'REDIRECT') {
      if (!loopback)
        throw new LbotError('mcp.auth_failed', `MCP server ${record.name}: the authorization server wants a browser flow for a client-credentials client`);
      // Out of time, the loopback listener closes: a redirect that comes later finds nobody.
      const waiting = new AbortController();
      waiting.signal.addEventListener('abort', () => loopback.close(), { once: true });
      const code = await withTimeout(loopback.code, opts.timeoutMs, {
        abort: waiting,
        error: () =>
          new LbotError('mcp.auth_failed', `MCP server ${record.name}: no authorization came back within ${Math.round(opts.timeoutMs / 1000)}s`, {
            hint: `run lbot mcp login ${record.name} again`,
          }),
      });
      result = await auth(provider, { ...base, authorizationCode: code });
    }
    if (result !== 'AUTHORIZED') throw new LbotError('mcp.auth_failed', `MCP server ${record.name}: authorization did not complete`);
    const granted = unionScopes(scope, store.tokens()?.scope) ?? null;
    store.update(({ challenge: _done, ...s }) => ({ ...s, ...(granted ? { granted_scope: granted } : {}) }));
    return { name: record.name, grant: record.oauth.grant, scope: granted, browser };
  } finally {
    loopback?.close();
  }
}

/** Forgets the stored tokens and registration of a server. */
export function logout(record: McpServerRecord, dataDir: string): { name: string; removed: boolean } {
  return { name: record.name, removed: new OAuthStore(dataDir, record.name, record.url ?? '').remove() };
}
