// The HTTP bot contract's pure parts: HMAC-SHA256 over "{timestamp}.{body}" with a 300 s window, the
// envelope of an inbound message, and the signed callback the sender builds.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PlatformAccountSchema } from '../../../src/core/delivery/accounts.js';
import { HttpBotMessageSchema, httpBotEnvelope, signatureProblem, signBody, SIGNATURE_WINDOW_S } from '../../../src/core/delivery/http-bot.js';
import { SENDERS } from '../../../src/core/delivery/outbound/index.js';
import { replyRoute, RunReplies } from '../../../src/core/delivery/replies.js';
import { BindingSchema } from '../../../src/core/protocol/binding.js';
import type { OutboxRecord } from '../../../src/core/stores/delivery-types.js';

const SECRET = 's3cret';
const hmac = (ts: string, body: string) => createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex');
const account = PlatformAccountSchema.parse({ name: 'desk', platform: 'http', token_env: 'HB_SECRET', api_base: 'http://127.0.0.1:9/cb' });
const binding = BindingSchema.parse({ binding_id: 'b', runner_id: 'plugin:a/b/c' });

describe('http bot signatures', () => {
  const body = '{"session_id":"t-1","message":"hi"}';
  const check = (over: Partial<Parameters<typeof signatureProblem>[0]>) =>
    signatureProblem({ secret: SECRET, timestamp: '1000', signature: `sha256=${hmac('1000', body)}`, rawBody: body, nowS: 1000, ...over });

  it('signs HMAC-SHA256 over "{timestamp}.{body}", hex, with a sha256= prefix', () => {
    expect(signBody(SECRET, '1000', body)).toBe(`sha256=${hmac('1000', body)}`);
  });

  it('accepts a matching signature (prefixed or bare hex) within the window on either side', () => {
    expect(check({})).toBeNull();
    expect(check({ signature: hmac('1000', body).toUpperCase() })).toBeNull();
    expect(check({ nowS: 1000 + SIGNATURE_WINDOW_S })).toBeNull();
    expect(check({ nowS: 1000 - SIGNATURE_WINDOW_S })).toBeNull();
  });

  it('refuses a stale or future timestamp, a changed body, another secret, and missing or malformed headers', () => {
    expect(check({ nowS: 1000 + SIGNATURE_WINDOW_S + 1 })).toMatch(/outside the 300 s window/);
    expect(check({ nowS: 1000 - SIGNATURE_WINDOW_S - 1 })).toMatch(/outside/);
    expect(check({ rawBody: body.replace('hi', 'ho') })).toBe('the signature does not match');
    expect(check({ secret: 'other' })).toBe('the signature does not match');
    // The timestamp is part of what is signed: moving it breaks the signature.
    expect(check({ timestamp: '1001', nowS: 1001 })).toBe('the signature does not match');
    expect(check({ timestamp: undefined })).toMatch(/missing x-langbot-timestamp/);
    expect(check({ signature: undefined })).toMatch(/missing x-langbot-signature/);
    expect(check({ timestamp: '1e3' })).toMatch(/not epoch seconds/);
    expect(check({ signature: 'sha256=abc' })).toMatch(/not a hex/);
  });
});

describe('http bot messages', () => {
  it('a message becomes a message.received in the session conversation; a reset moves it to the next generation', () => {
    const message = HttpBotMessageSchema.parse({
      session_id: 't-1',
      message: [
        { type: 'Plain', text: 'he' },
        { type: 'Plain', text: 'llo' },
      ],
      ticket: 7,
    });
    const e = httpBotEnvelope({ account, message, key: 'k1', generation: 0, nowS: 5, sync: false, uniqueId: 'u' });
    expect(e).toMatchObject({
      event_id: 'http:desk:k1',
      event_type: 'message.received',
      source: 'platform',
      bot_id: 'http:desk',
      conversation_id: 'http:desk:t-1',
      input: { text: 'hello' },
      delivery: { surface: 'platform', reply_target: { session_id: 't-1' }, platform_capabilities: { platform: 'http' } },
      data: { session_id: 't-1', session_type: 'person', extra: { ticket: 7 } },
    });
    const after = httpBotEnvelope({ account, message, key: null, generation: 2, nowS: 5, sync: true, uniqueId: 'u' });
    expect(after).toMatchObject({ event_id: 'http:desk:u', conversation_id: 'http:desk:t-1#2', delivery: { reply_target: null } });
  });

  it('refuses a body without session_id or message', () => {
    expect(HttpBotMessageSchema.safeParse({ message: 'x' }).success).toBe(false);
    expect(HttpBotMessageSchema.safeParse({ session_id: 's' }).success).toBe(false);
    expect(HttpBotMessageSchema.safeParse({ session_id: '', message: 'x' }).success).toBe(false);
  });
});

describe('http bot callbacks', () => {
  const message = HttpBotMessageSchema.parse({ session_id: 't-1', message: 'hi', message_id: 'm-9' });
  const event = httpBotEnvelope({ account, message, key: 'm-9', generation: 0, nowS: 5, sync: false, uniqueId: 'u' });
  const route = replyRoute(event, binding, [account]);
  const [draft] = new RunReplies(route!, { run_id: 'r1', event }).completed({ role: 'assistant', content: 'the answer' });
  const item: OutboxRecord = {
    ...draft!,
    id: 1,
    status: 'sending',
    attempts: 1,
    next_attempt_at: 0,
    owner: null,
    platform_message_id: null,
    edits_message_id: null,
    error: null,
    created_at: 0,
    updated_at: 0,
  };

  it('one signed POST to the callback URL per message, keyed by the outbox row', () => {
    const req = SENDERS.http.request({ base: 'http://127.0.0.1:9/cb', token: SECRET, item, nowS: 1234.7 });
    expect(req).toMatchObject({ method: 'POST', url: 'http://127.0.0.1:9/cb' });
    expect(req.headers['x-langbot-timestamp']).toBe('1234');
    expect(req.headers['x-langbot-signature']).toBe(`sha256=${hmac('1234', req.body)}`);
    expect(req.headers['idempotency-key']).toBe('r1:m0:p0');
    expect(JSON.parse(req.body)).toEqual({
      type: 'message',
      bot: 'desk',
      session_id: 't-1',
      reply_to: 'm-9',
      message_id: 'r1:m0:p0',
      run_id: 'r1',
      message: 'the answer',
    });
    expect(() => SENDERS.http.request({ base: 'x', token: null, item, nowS: 1 })).toThrow(/signing secret/);
  });

  it('2xx delivers, 409 counts as already delivered, 429 and 5xx retry (Retry-After honoured), other 4xx fail', () => {
    const answer = (status: number, headers: Record<string, string> = {}, text = '') => ({
      status,
      header: (n: string) => headers[n] ?? null,
      json: text ? (JSON.parse(text) as unknown) : null,
      text,
    });
    expect(SENDERS.http.read(answer(200, {}, '{"message_id":"x1"}'))).toEqual({ kind: 'delivered', message_id: 'x1' });
    expect(SENDERS.http.read(answer(204))).toEqual({ kind: 'delivered', message_id: null });
    expect(SENDERS.http.read(answer(409))).toEqual({ kind: 'delivered', message_id: null });
    expect(SENDERS.http.read(answer(429, { 'retry-after': '3' }))).toMatchObject({ kind: 'retry', error: { retry_after_s: 3 } });
    expect(SENDERS.http.read(answer(503))).toMatchObject({ kind: 'retry' });
    expect(SENDERS.http.read(answer(401, {}, '{"error":"bad signature"}'))).toMatchObject({ kind: 'failed', error: { code: 'http_401' } });
  });
});
