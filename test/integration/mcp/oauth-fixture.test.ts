// The loopback authorization server the `lbot mcp login` tests use is as strict as a real one: what it
// refuses here is what a sloppy client would get wrong (test/helpers/mcp-oauth-server.ts).
import { createHash, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startOAuthFixture, type OAuthFixture } from '../../helpers/mcp-oauth-server.js';

let as: OAuthFixture | undefined;
afterEach(async () => {
  await as?.close();
  as = undefined;
});

const REDIRECT = 'http://127.0.0.1:5999/callback';
const verifier = randomBytes(32).toString('base64url');
const challenge = createHash('sha256').update(verifier).digest('base64url');

async function register(f: OAuthFixture, redirect_uris: string[]): Promise<{ status: number; client_id?: string }> {
  const res = await fetch(`${f.issuer}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris, token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] }),
  });
  const body = (await res.json()) as { client_id?: string };
  return { status: res.status, ...(body.client_id ? { client_id: body.client_id } : {}) };
}

/** GET /authorize; returns the redirect's query (code or error) or the status of a page that did not redirect. */
async function authorize(f: OAuthFixture, params: Record<string, string>): Promise<URLSearchParams | number> {
  const url = new URL(`${f.issuer}/authorize`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const res = await fetch(url, { redirect: 'manual' });
  const location = res.headers.get('location');
  return location ? new URL(location).searchParams : res.status;
}

async function token(f: OAuthFixture, form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${f.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('the loopback OAuth fixture', () => {
  it('refuses what a sloppy client gets wrong and honours what a correct one sends', async () => {
    const f = (as = await startOAuthFixture({ kind: 'oauth', accessTtlSec: 60 }));
    expect((await register(f, ['https://evil.example/callback'])).status).toBe(400);
    const { client_id = '' } = await register(f, [REDIRECT]);
    const good = {
      response_type: 'code',
      client_id,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's1',
      resource: f.url,
    };

    expect(await authorize(f, { ...good, redirect_uri: 'http://127.0.0.1:6000/callback' })).toBe(400);
    expect(await authorize(f, { ...good, client_id: 'someone-else' })).toBe(400);
    for (const bad of [{ code_challenge_method: 'plain' }, { resource: 'http://127.0.0.1:1/mcp' }, { code_challenge: 'short' }]) {
      const q = await authorize(f, { ...good, ...bad });
      expect(q instanceof URLSearchParams && q.get('error')).toBe('invalid_request');
    }
    const q = await authorize(f, good);
    const code = q instanceof URLSearchParams ? (q.get('code') ?? '') : '';
    expect(q instanceof URLSearchParams && q.get('state')).toBe('s1');

    const exchange = { grant_type: 'authorization_code', code, client_id, redirect_uri: REDIRECT, code_verifier: verifier, resource: f.url };
    expect((await token(f, { ...exchange, code_verifier: randomBytes(32).toString('base64url') })).body.error).toBe('invalid_grant');
    // The failed attempt used the code up: a code is good for one exchange only.
    expect((await token(f, exchange)).body.error).toBe('invalid_grant');

    const q2 = await authorize(f, { ...good, state: 's2' });
    const code2 = q2 instanceof URLSearchParams ? (q2.get('code') ?? '') : '';
    expect((await token(f, { ...exchange, code: code2, resource: 'http://127.0.0.1:1/mcp' })).body.error).toBe('invalid_target');
    const q3 = await authorize(f, { ...good, state: 's3' });
    const code3 = q3 instanceof URLSearchParams ? (q3.get('code') ?? '') : '';
    const issued = await token(f, { ...exchange, code: code3 });
    expect(issued.status).toBe(200);
    expect(issued.body).toMatchObject({ token_type: 'Bearer', expires_in: 60, refresh_token: expect.any(String) });

    const mcp = (bearer: string) =>
      fetch(f.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
    expect((await mcp(String(issued.body.access_token))).status).toBe(200);
    f.advance(61_000);
    const expired = await mcp(String(issued.body.access_token));
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const refresh = { grant_type: 'refresh_token', refresh_token: String(issued.body.refresh_token), client_id, resource: f.url };
    const renewed = await token(f, refresh);
    expect(renewed.status).toBe(200);
    expect(renewed.body.refresh_token).not.toBe(issued.body.refresh_token);
    // Rotation: the old refresh token is spent.
    expect((await token(f, refresh)).body.error).toBe('invalid_grant');
    expect((await mcp(String(renewed.body.access_token))).status).toBe(200);
    expect(f.counts).toMatchObject({ code_grants: 1, refresh_grants: 1 });
  });
});
