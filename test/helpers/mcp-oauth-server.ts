// A loopback OAuth 2.1 authorization server and the MCP resource server it protects, for the tests of
// `lbot mcp login` and stored tokens. Strict like a real one: dynamic registration of loopback redirect
// URIs only, PKCE S256 only, exact redirect_uri and client_id on both legs, the `resource` parameter
// (RFC 8707) on every grant, single-use codes, expiring access tokens and rotating refresh tokens (a
// reused refresh token is refused). Every refused request is kept with its reason in `refusals`, so a
// test can prove lbot sent nothing the server had to refuse. Time is the fixture's own clock
// (`advance`), so a test expires tokens without waiting.
import { createHash, randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const MAX_BODY = 64 * 1024;
const CODE_TTL_MS = 60_000;
const SCOPE = 'mcp:tools';

/** How the MCP endpoint is protected: OAuth by this authorization server, a static header, or not at all. */
export type Protection = { kind: 'oauth'; accessTtlSec?: number } | { kind: 'header'; name: string; value: string; body?: string } | { kind: 'none' };

type Client = { client_id: string; client_secret?: string; auth_method: 'none' | 'client_secret_basic' | 'client_secret_post'; redirect_uris: string[] };
type Code = { client_id: string; redirect_uri: string; challenge: string; resource: string; scope: string; expires: number; used: boolean };
type Access = { client_id: string; resource: string; expires: number };
type Refresh = { client_id: string; resource: string; scope: string; used: boolean };

export type OAuthFixture = {
  /** The MCP endpoint (Streamable HTTP). */
  url: string;
  issuer: string;
  counts: { register: number; authorize: number; code_grants: number; refresh_grants: number; mcp_requests: number; mcp_unauthorized: number };
  /** Requests refused for breaking a rule, with the reason. */
  refusals: string[];
  /** The bearer tokens the MCP endpoint accepted, in order. */
  accepted: string[];
  /** Moves the fixture's clock forward (expires codes and access tokens). */
  advance(ms: number): void;
  close(): Promise<void>;
};

const RegisterSchema = z.looseObject({
  redirect_uris: z.array(z.string()).min(1).max(5),
  token_endpoint_auth_method: z.enum(['none', 'client_secret_basic', 'client_secret_post']).default('client_secret_basic'),
  grant_types: z.array(z.string()).default(['authorization_code']),
  response_types: z.array(z.string()).default(['code']),
});

function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

const token = (prefix: string) => `${prefix}_${randomBytes(24).toString('base64url')}`;

/** A redirect URI a native app may register (RFC 8252 §7.3): http on the loopback IP, any port. */
function isLoopbackRedirect(uri: string): boolean {
  try {
    const u = new URL(uri);
    return u.protocol === 'http:' && (u.hostname === '127.0.0.1' || u.hostname === '[::1]') && u.hash === '' && u.username === '';
  } catch {
    return false;
  }
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > MAX_BODY) return null;
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The MCP server behind the endpoint: `whoami` (title, annotations, outputSchema, structuredContent next to text). */
function mcpServer(who: string): Server {
  const server = new Server({ name: 'lbot-fixture-protected', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      {
        name: 'whoami',
        title: 'Who am I',
        description: 'The OAuth client this call was authorized for.',
        inputSchema: { type: 'object', properties: {} },
        outputSchema: { type: 'object', properties: { client_id: { type: 'string' } }, required: ['client_id'] },
        annotations: { readOnlyHint: true, idempotentHint: true },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    if (request.params.name !== 'whoami') throw new Error(`unknown tool ${request.params.name}`);
    return { content: [{ type: 'text', text: `client ${who}` }], structuredContent: { client_id: who } };
  });
  return server;
}

/** Starts the authorization server and the protected MCP endpoint, each on its own loopback port. */
export async function startOAuthFixture(protection: Protection = { kind: 'oauth' }): Promise<OAuthFixture> {
  let now = Date.now();
  const clients = new Map<string, Client>();
  const codes = new Map<string, Code>();
  const access = new Map<string, Access>();
  const refresh = new Map<string, Refresh>();
  const counts = { register: 0, authorize: 0, code_grants: 0, refresh_grants: 0, mcp_requests: 0, mcp_unauthorized: 0 };
  const refusals: string[] = [];
  const accepted: string[] = [];
  const accessTtlSec = protection.kind === 'oauth' ? (protection.accessTtlSec ?? 600) : 600;

  const asServer = http.createServer();
  const rsServer = http.createServer();
  const issuer = await listen(asServer);
  const origin = await listen(rsServer);
  const resource = `${origin}/mcp`;
  const prmUrl = `${origin}/.well-known/oauth-protected-resource/mcp`;

  const refuse = (res: ServerResponse, status: number, error: string, why: string) => {
    refusals.push(`${error}: ${why}`);
    json(res, status, { error, error_description: why });
  };

  /** Client authentication at the token endpoint, by the method the client registered. */
  const authenticate = (req: IncomingMessage, form: URLSearchParams): Client | string => {
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    let id = form.get('client_id');
    let secret = form.get('client_secret');
    if (basic) {
      const [u, p] = Buffer.from(basic, 'base64').toString('utf8').split(':');
      id = decodeURIComponent(u ?? '');
      secret = decodeURIComponent(p ?? '');
    }
    const client = id ? clients.get(id) : undefined;
    if (!client) return `unknown client_id ${id ?? '(none)'}`;
    if (client.auth_method === 'none') return basic || form.has('client_secret') ? 'a public client sent a secret' : client;
    if ((client.auth_method === 'client_secret_basic') !== Boolean(basic)) return `client authentication is not ${client.auth_method}`;
    return secret === client.client_secret ? client : 'wrong client secret';
  };

  asServer.on('request', (req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', issuer);
      if (req.method === 'GET' && url.pathname === '/.well-known/oauth-authorization-server') {
        return json(res, 200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          registration_endpoint: `${issuer}/register`,
          response_types_supported: ['code'],
          grant_types_supported: ['authorization_code', 'refresh_token'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
          scopes_supported: [SCOPE],
        });
      }
      if (req.method === 'POST' && url.pathname === '/register') {
        counts.register += 1;
        const text = await readBody(req);
        if (text === null) return refuse(res, 413, 'invalid_client_metadata', 'registration body too large');
        let raw: unknown;
        try {
          raw = JSON.parse(text);
        } catch {
          return refuse(res, 400, 'invalid_client_metadata', 'registration body is not JSON');
        }
        const meta = RegisterSchema.safeParse(raw);
        if (!meta.success) return refuse(res, 400, 'invalid_client_metadata', meta.error.message);
        const bad = meta.data.redirect_uris.find((u) => !isLoopbackRedirect(u));
        if (bad) return refuse(res, 400, 'invalid_redirect_uri', `not a loopback http redirect: ${bad}`);
        const client: Client = { client_id: token('client'), auth_method: meta.data.token_endpoint_auth_method, redirect_uris: meta.data.redirect_uris };
        if (client.auth_method !== 'none') client.client_secret = token('secret');
        clients.set(client.client_id, client);
        return json(res, 201, {
          ...meta.data,
          client_id: client.client_id,
          client_id_issued_at: Math.floor(now / 1000),
          ...(client.client_secret ? { client_secret: client.client_secret, client_secret_expires_at: 0 } : {}),
        });
      }
      if (req.method === 'GET' && url.pathname === '/authorize') {
        counts.authorize += 1;
        const q = url.searchParams;
        const client = clients.get(q.get('client_id') ?? '');
        const redirect = q.get('redirect_uri') ?? '';
        // Without a known client and one of its redirect URIs the browser is not sent anywhere (RFC 6749 §4.1.2.1).
        if (!client) return refuse(res, 400, 'invalid_client', `unknown client_id ${q.get('client_id')}`);
        if (!client.redirect_uris.includes(redirect)) return refuse(res, 400, 'invalid_request', `redirect_uri ${redirect} is not registered`);
        const back = (params: Record<string, string>) => {
          const to = new URL(redirect);
          for (const [k, v] of Object.entries({ ...params, ...(q.get('state') ? { state: q.get('state') ?? '' } : {}) })) to.searchParams.set(k, v);
          res.writeHead(302, { location: to.href }).end();
        };
        const challenge = q.get('code_challenge') ?? '';
        const why =
          q.get('response_type') !== 'code'
            ? 'response_type must be code'
            : q.get('code_challenge_method') !== 'S256'
              ? 'code_challenge_method must be S256'
              : !/^[A-Za-z0-9_-]{43}$/.test(challenge)
                ? 'code_challenge is not a base64url SHA-256'
                : !q.get('state')
                  ? 'state is missing'
                  : q.get('resource') !== resource
                    ? `resource must be ${resource}, got ${q.get('resource')}`
                    : (q.get('scope') ?? SCOPE).split(' ').some((s) => s !== SCOPE)
                      ? `unknown scope ${q.get('scope')}`
                      : null;
        if (why) {
          refusals.push(`invalid_request: ${why}`);
          return back({ error: 'invalid_request', error_description: why });
        }
        const code = token('code');
        codes.set(code, {
          client_id: client.client_id,
          redirect_uri: redirect,
          challenge,
          resource,
          scope: q.get('scope') ?? SCOPE,
          expires: now + CODE_TTL_MS,
          used: false,
        });
        return back({ code });
      }
      if (req.method === 'POST' && url.pathname === '/token') {
        const text = await readBody(req);
        if (text === null) return refuse(res, 413, 'invalid_request', 'token request too large');
        if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
          return refuse(res, 400, 'invalid_request', 'token request is not form-encoded');
        const form = new URLSearchParams(text);
        const client = authenticate(req, form);
        if (typeof client === 'string') return refuse(res, 401, 'invalid_client', client);
        const issue = (scope: string) => {
          const at = token('at');
          const rt = token('rt');
          access.set(at, { client_id: client.client_id, resource, expires: now + accessTtlSec * 1000 });
          refresh.set(rt, { client_id: client.client_id, resource, scope, used: false });
          json(res, 200, { access_token: at, token_type: 'Bearer', expires_in: accessTtlSec, refresh_token: rt, scope });
        };
        if (form.get('grant_type') === 'authorization_code') {
          const code = codes.get(form.get('code') ?? '');
          if (!code) return refuse(res, 400, 'invalid_grant', 'unknown code');
          if (code.used) return refuse(res, 400, 'invalid_grant', 'code already used');
          code.used = true;
          if (code.expires <= now) return refuse(res, 400, 'invalid_grant', 'code expired');
          if (code.client_id !== client.client_id) return refuse(res, 400, 'invalid_grant', 'code issued to another client');
          if (form.get('redirect_uri') !== code.redirect_uri) return refuse(res, 400, 'invalid_grant', 'redirect_uri differs from the authorization request');
          if (s256(form.get('code_verifier') ?? '') !== code.challenge) return refuse(res, 400, 'invalid_grant', 'PKCE code_verifier does not match');
          if (form.get('resource') !== code.resource) return refuse(res, 400, 'invalid_target', `resource must be ${code.resource}`);
          counts.code_grants += 1;
          return issue(code.scope);
        }
        if (form.get('grant_type') === 'refresh_token') {
          const rt = refresh.get(form.get('refresh_token') ?? '');
          if (!rt) return refuse(res, 400, 'invalid_grant', 'unknown refresh token');
          if (rt.client_id !== client.client_id) return refuse(res, 400, 'invalid_grant', 'refresh token of another client');
          if (rt.used) return refuse(res, 400, 'invalid_grant', 'refresh token already used (rotation)');
          if (form.has('resource') && form.get('resource') !== rt.resource) return refuse(res, 400, 'invalid_target', `resource must be ${rt.resource}`);
          rt.used = true;
          counts.refresh_grants += 1;
          return issue(rt.scope);
        }
        return refuse(res, 400, 'unsupported_grant_type', `grant_type ${form.get('grant_type')}`);
      }
      res.writeHead(404).end();
    })().catch((err: unknown) => {
      refusals.push(`server_error: ${String(err)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });

  const who = (req: IncomingMessage): string | null => {
    if (protection.kind === 'none') return 'anonymous';
    if (protection.kind === 'header') return req.headers[protection.name.toLowerCase()] === protection.value ? 'static-header' : null;
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const grant = bearer ? access.get(bearer) : undefined;
    if (!bearer || !grant || grant.expires <= now || grant.resource !== resource) return null;
    accepted.push(bearer);
    return grant.client_id;
  };

  rsServer.on('request', (req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', origin);
      if (req.method === 'GET' && url.pathname === '/.well-known/oauth-protected-resource/mcp' && protection.kind === 'oauth') {
        return json(res, 200, { resource, authorization_servers: [issuer], scopes_supported: [SCOPE], bearer_methods_supported: ['header'] });
      }
      if (url.pathname !== '/mcp') return void res.writeHead(404).end();
      counts.mcp_requests += 1;
      const client = who(req);
      if (!client) {
        counts.mcp_unauthorized += 1;
        if (protection.kind === 'header') return void res.writeHead(401, { 'content-type': 'text/plain' }).end(protection.body ?? 'access denied');
        const error = req.headers.authorization ? 'error="invalid_token", ' : '';
        return json(res, 401, { error: 'invalid_token' }, { 'www-authenticate': `Bearer ${error}resource_metadata="${prmUrl}", scope="${SCOPE}"` });
      }
      // Stateless Streamable HTTP: one server and transport per request, answers as JSON.
      const server = mcpServer(client);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      const text = req.method === 'POST' ? await readBody(req) : null;
      await transport.handleRequest(req, res, text ? (JSON.parse(text) as unknown) : undefined);
    })().catch((err: unknown) => {
      refusals.push(`mcp_error: ${String(err)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });

  const closeServer = (s: http.Server) =>
    new Promise<void>((resolve) => {
      s.closeAllConnections();
      s.close(() => resolve());
    });
  return {
    url: resource,
    issuer,
    counts,
    refusals,
    accepted,
    advance: (ms) => {
      now += ms;
    },
    close: async () => {
      await Promise.all([closeServer(asServer), closeServer(rsServer)]);
    },
  };
}
