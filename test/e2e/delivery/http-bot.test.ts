// The LangBot HTTP-bot contract against a real `lbot serve`: a signed message answered 202, the reply
// POSTed signed to the callback URL; bad or stale signatures 401, a repeated idempotency key 409,
// /sync answering with the reply, /reset starting the session over. Signing here is written out with
// node:crypto, independent of lbot's own code. One serve process for the whole file.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempPlugins, type TempPlugins } from '../../helpers/plugins.js';
import { startServe, type ServeProcess } from '../../helpers/serve.js';

const SECRET = 'http-bot-signing-secret';
const SCRIPTED = 'plugin:acme/scripted/default';
const script = [
  { emit: { type: 'message.completed', data: { message: { role: 'assistant', content: 'answer from lbot' } } } },
  { emit: { type: 'run.completed', data: {} } },
];

type Callback = { headers: IncomingHttpHeaders; body: string; verified: boolean; json: Record<string, unknown> };
const callbacks: Callback[] = [];
let callbackServer: Server;
let dataDir: string;
let plugins: TempPlugins;
let s: ServeProcess;

const sign = (ts: string, body: string) => `sha256=${createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex')}`;
const now = () => String(Math.floor(Date.now() / 1000));

/** A backend posting to the bot: signed unless told otherwise. */
async function post(
  route: string,
  body: unknown,
  opts: { ts?: string; signature?: string; key?: string } = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const text = JSON.stringify(body);
  const ts = opts.ts ?? now();
  const res = await fetch(`${s.url}${route}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-langbot-timestamp': ts,
      'x-langbot-signature': opts.signature ?? sign(ts, text),
      ...(opts.key ? { 'idempotency-key': opts.key } : {}),
    },
    body: text,
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  // The backend's callback endpoint: it checks lbot's signature the way a client of the contract would.
  callbackServer = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString('utf8')));
    req.on('end', () => {
      const ts = String(req.headers['x-langbot-timestamp'] ?? '');
      const fresh = Math.abs(Date.now() / 1000 - Number(ts)) <= 300;
      const verified = fresh && req.headers['x-langbot-signature'] === sign(ts, body);
      callbacks.push({ headers: req.headers, body, verified, json: JSON.parse(body) as Record<string, unknown> });
      res.writeHead(verified ? 200 : 401, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
  const port = (callbackServer.address() as AddressInfo).port;
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-httpbot-'));
  plugins = await createTempPlugins(['scripted']);
  const config = {
    platforms: [{ name: 'desk', platform: 'http', token_env: 'HB_SECRET', api_base: `http://127.0.0.1:${port}/lbot-callback` }],
    bindings: [{ binding_id: 'desk-reply', runner_id: SCRIPTED, runner_config: { script } }],
  };
  await writeFile(path.join(dataDir, 'lbot.config.json'), JSON.stringify(config));
  s = await startServe({ dataDir, pluginsDir: plugins.pluginsDir, env: { HB_SECRET: SECRET } });
}, 60_000);

afterAll(async () => {
  await s?.stop('SIGTERM').catch(() => undefined);
  await new Promise((r) => callbackServer?.close(r));
  await rm(dataDir, { recursive: true, force: true });
  await plugins?.cleanup();
});

describe('the HTTP bot contract on lbot serve', () => {
  it('a signed message is answered 202 and its reply arrives signed at the callback URL', async () => {
    const accepted = await post('/bots/desk', { session_id: 'ticket-1', message: 'hello', message_id: 'm-1', user_name: 'Ann' });
    expect(accepted.status).toBe(202);
    expect(accepted.json).toMatchObject({ ok: true, session_id: 'ticket-1', event_id: 'http:desk:m-1' });
    await expect.poll(() => callbacks.length, { timeout: 20_000, interval: 50 }).toBe(1);
    const cb = callbacks[0]!;
    expect(cb.verified).toBe(true);
    expect(cb.json).toMatchObject({
      type: 'message',
      bot: 'desk',
      session_id: 'ticket-1',
      reply_to: 'm-1',
      message: 'answer from lbot',
      run_id: accepted.json.run_id,
    });
    expect(cb.headers['idempotency-key']).toBe(cb.json.message_id);
    const run = await s.waitRun(String(accepted.json.run_id));
    expect(run).toMatchObject({ status: 'completed', conversation_id: 'http:desk:ticket-1' });
    const outbox = (await s.request('GET', `/v1/outbox?run=${String(accepted.json.run_id)}`)).json as { items: unknown[] };
    expect(outbox.items).toMatchObject([{ platform: 'http', status: 'delivered', attempts: 1 }]);
  });

  it('refuses a bad signature, a stale timestamp and a missing signature with 401, and an unknown bot with 404', async () => {
    const body = { session_id: 'ticket-x', message: 'forged' };
    const bad = await post('/bots/desk', body, { signature: sign(now(), '{"session_id":"other"}') });
    expect(bad.status).toBe(401);
    expect(bad.json).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    const staleTs = String(Math.floor(Date.now() / 1000) - 301);
    const stale = await post('/bots/desk', body, { ts: staleTs, signature: sign(staleTs, JSON.stringify(body)) });
    expect(stale.status).toBe(401);
    expect(JSON.stringify(stale.json)).toContain('300 s window');
    const unsigned = await fetch(`${s.url}/bots/desk`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(unsigned.status).toBe(401);
    expect((await post('/bots/nobody', body)).status).toBe(404);
    // A bearer token does not stand in for the signature.
    const bearer = await fetch(`${s.url}/bots/desk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${s.token}` },
      body: JSON.stringify(body),
    });
    expect(bearer.status).toBe(401);
    const runs = (await s.request('GET', '/v1/runs')).json as { items: Array<Record<string, unknown>> };
    expect(runs.items.filter((r) => r.conversation_id === 'http:desk:ticket-x')).toHaveLength(0);
  });

  it('a repeated idempotency key is answered 409 and runs nothing', async () => {
    const first = await post('/bots/desk', { session_id: 'ticket-2', message: 'once' }, { key: 'idem-42' });
    expect(first.status).toBe(202);
    const again = await post('/bots/desk', { session_id: 'ticket-2', message: 'once' }, { key: 'idem-42' });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ ok: false, error: { code: 'http_bot.duplicate' } });
    await s.waitRun(String(first.json.run_id));
    const runs = (await s.request('GET', '/v1/runs')).json as { items: Array<Record<string, unknown>> };
    expect(runs.items.filter((r) => r.conversation_id === 'http:desk:ticket-2')).toHaveLength(1);
  });

  it('/sync answers with the reply and sends no callback for it', async () => {
    const before = callbacks.length;
    const r = await post('/bots/desk/sync', { session_id: 'ticket-3', message: 'wait for it' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: true, status: 'completed', session_id: 'ticket-3', replies: [{ message: 'answer from lbot' }] });
    const outbox = (await s.request('GET', `/v1/outbox?run=${String(r.json.run_id)}`)).json as { items: unknown[] };
    expect(outbox.items).toHaveLength(0);
    expect(callbacks.slice(before).filter((c) => c.json.session_id === 'ticket-3')).toHaveLength(0);
  });

  it('/reset starts the session over: the next message goes to a new conversation', async () => {
    const first = await post('/bots/desk/sync', { session_id: 'ticket-4', message: 'one' });
    expect((await s.waitRun(String(first.json.run_id))).conversation_id).toBe('http:desk:ticket-4');
    expect((await post('/bots/desk/reset', { session_id: 'ticket-4' }, { signature: 'sha256=00' })).status).toBe(401);
    const reset = await post('/bots/desk/reset', { session_id: 'ticket-4' });
    expect(reset).toMatchObject({ status: 200, json: { ok: true, generation: 1, conversation_id: 'http:desk:ticket-4#1' } });
    const next = await post('/bots/desk/sync', { session_id: 'ticket-4', message: 'two' });
    expect((await s.waitRun(String(next.json.run_id))).conversation_id).toBe('http:desk:ticket-4#1');
  });
});
