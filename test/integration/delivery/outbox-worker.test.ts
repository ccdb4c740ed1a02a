// The outbox worker against local fakes of Telegram, Slack, Discord, Lark and OneBot, on a real SQLite store.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatformAccountSchema, type PlatformAccount } from '../../../src/core/delivery/accounts.js';
import type { OutboxDraft, OutboxRecord } from '../../../src/core/stores/delivery-types.js';
import { openSqliteStores, type SqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { MAX_RETRY_AFTER_S, OutboxWorker } from '../../../src/runtime/delivery/outbox-worker.js';
import { fakeDiscord, fakeLark, fakeOneBot, fakeSlack, fakeTelegram, type FakePlatform } from '../../helpers/fake-platforms.js';

type Ctx = { stores: SqliteStores; worker: OutboxWorker; dir: string; fakes: FakePlatform[]; warnings: string[] };
const open: Ctx[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) {
    await c.worker.close();
    c.stores.close();
    await Promise.all(c.fakes.map((f) => f.close()));
    await rm(c.dir, { recursive: true, force: true });
  }
});

const account = (a: Record<string, unknown>): PlatformAccount => PlatformAccountSchema.parse(a);

async function setup(accounts: PlatformAccount[], env: Record<string, string>, fakes: FakePlatform[]): Promise<Ctx> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lbot-outbox-'));
  const stores = openSqliteStores(dir);
  const warnings: string[] = [];
  const worker = new OutboxWorker({ store: stores.delivery, accounts: () => accounts, env, warn: (m) => warnings.push(m) });
  worker.start();
  const c = { stores, worker, dir, fakes, warnings };
  open.push(c);
  return c;
}

let seq = 0;
function draft(accountName: string, platform: string, target: Record<string, unknown>, text: string, extra: Partial<OutboxDraft> = {}): OutboxDraft {
  seq += 1;
  return {
    idempotency_key: `run-${seq}:m0:p0`,
    account: accountName,
    platform,
    op: 'send',
    run_id: `run-${seq}`,
    event_id: 'e',
    conversation_id: 'c',
    target,
    text,
    edits_key: null,
    ...extra,
  };
}

async function settled(c: Ctx, ids: number[], timeoutMs = 20_000): Promise<OutboxRecord[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const rows = ids.map((id) => c.stores.delivery.get(id)!);
    if (rows.every((r) => r.status === 'delivered' || r.status === 'failed')) return rows;
    if (Date.now() > until) throw new Error(`outbox rows not settled: ${JSON.stringify(rows)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function send(c: Ctx, drafts: OutboxDraft[]): number[] {
  const rows = c.stores.delivery.record(drafts, Date.now() / 1000);
  c.worker.kick();
  return rows.map((r) => r.id);
}

describe('outbox worker', () => {
  it('Telegram: a reply is delivered after two 429s, each retry_after honoured', async () => {
    const tg = await fakeTelegram('111:tok');
    const c = await setup([account({ name: 'tg', platform: 'telegram', token_env: 'TG', api_base: tg.url })], { TG: '111:tok' }, [tg]);
    tg.misbehave({ kind: '429', retryAfterS: 1 }, 2);
    const [id] = send(c, [draft('tg', 'telegram', { chat_id: 42, message_id: 7, message_thread_id: 3 }, 'hello')]);
    const [row] = await settled(c, [id!]);
    expect(row).toMatchObject({ status: 'delivered', attempts: 3, platform_message_id: '1' });
    expect(tg.sent).toHaveLength(1);
    expect(tg.sent[0]!.body).toEqual({
      chat_id: 42,
      text: 'hello',
      message_thread_id: 3,
      reply_parameters: { message_id: 7, allow_sending_without_reply: true },
    });
    // The waits the platform asked for were kept: each request came at least retry_after after the one before.
    const times = tg.requests.map((r) => r.at);
    expect(times).toHaveLength(3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(950);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(950);
  });

  it('HTTP bot: a callback answered 429 twice is delivered on the third attempt, Retry-After honoured, signed with the callback secret', async () => {
    const seen: Array<{ at: number; ts: string; sig: string; body: string }> = [];
    const hook = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString('utf8')));
      req.on('end', () => {
        seen.push({ at: Date.now(), ts: String(req.headers['x-langbot-timestamp']), sig: String(req.headers['x-langbot-signature']), body });
        if (seen.length <= 2) res.writeHead(429, { 'retry-after': '1' }).end('slow down');
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{"message_id":"cb-1"}');
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/cb`;
    const c = await setup(
      [account({ name: 'desk', platform: 'http', token_env: 'IN_SECRET', callback_secret_env: 'OUT_SECRET', api_base: url })],
      { IN_SECRET: 'inbound', OUT_SECRET: 'outbound' },
      [],
    );
    try {
      const [id] = send(c, [draft('desk', 'http', { session_id: 's-1' }, 'hello back')]);
      const [row] = await settled(c, [id!]);
      expect(row).toMatchObject({ status: 'delivered', attempts: 3, platform_message_id: 'cb-1' });
      expect(seen).toHaveLength(3);
      expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
      expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(950);
      // Every attempt is signed afresh with the callback secret over its own timestamp; the body is the same message.
      for (const r of seen) expect(r.sig).toBe(`sha256=${createHmac('sha256', 'outbound').update(`${r.ts}.${r.body}`).digest('hex')}`);
      expect(new Set(seen.map((r) => r.body)).size).toBe(1);
    } finally {
      await new Promise((r) => hook.close(r));
    }
  });

  it('Telegram: a refusal fails the row with the platform error at once; retry sends it again', async () => {
    const tg = await fakeTelegram('111:tok');
    const c = await setup([account({ name: 'tg', platform: 'telegram', token_env: 'TG', api_base: tg.url })], { TG: '111:wrong' }, [tg]);
    const [id] = send(c, [draft('tg', 'telegram', { chat_id: 42 }, 'hello')]);
    const [row] = await settled(c, [id!]);
    expect(row).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'telegram_401', message: 'Unauthorized', status: 401 } });
    expect(JSON.stringify(row)).not.toContain('111:wrong');
    expect(c.stores.delivery.retry(id!, Date.now() / 1000)).toBe(true);
    expect(c.stores.delivery.get(id!)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(c.stores.delivery.retry(id!, Date.now() / 1000)).toBe(false);
  });

  it('a hostile retry_after is capped; a 500 and a dropped connection are retried', async () => {
    const tg = await fakeTelegram('t');
    const c = await setup([account({ name: 'tg', platform: 'telegram', token_env: 'TG', api_base: tg.url })], { TG: 't' }, [tg]);
    tg.misbehave({ kind: '429', retryAfterS: 1e9 });
    const before = Date.now() / 1000;
    const [id] = send(c, [draft('tg', 'telegram', { chat_id: 1 }, 'x')]);
    await expect.poll(() => c.stores.delivery.get(id!)?.error?.code, { timeout: 10_000 }).toBe('telegram_429');
    const row = c.stores.delivery.get(id!)!;
    expect(row.status).toBe('pending');
    expect(row.next_attempt_at).toBeLessThanOrEqual(before + MAX_RETRY_AFTER_S + 5);
    expect(row.error?.retry_after_s).toBe(1e9);

    tg.misbehave({ kind: '500' });
    tg.misbehave({ kind: 'drop' });
    const [id2] = send(c, [draft('tg', 'telegram', { chat_id: 1 }, 'y')]);
    const [done] = await settled(c, [id2!]);
    expect(done).toMatchObject({ status: 'delivered', attempts: 3 });
  });

  it('Slack: chat.postMessage in the event thread with the bearer token; 429 Retry-After honoured', async () => {
    const slack = await fakeSlack('xoxb-1');
    const c = await setup([account({ name: 'sl', platform: 'slack', token_env: 'SLACK', api_base: `${slack.url}/api` })], { SLACK: 'xoxb-1' }, [slack]);
    slack.misbehave({ kind: '429', retryAfterS: 1 }, 2);
    const [id] = send(c, [draft('sl', 'slack', { channel: 'C1', ts: '1.2', thread_ts: '1.0' }, 'hi there')]);
    const [row] = await settled(c, [id!]);
    expect(row).toMatchObject({ status: 'delivered', attempts: 3 });
    expect(slack.sent.map((s) => s.body)).toEqual([{ channel: 'C1', text: 'hi there', thread_ts: '1.0' }]);
  });

  it('Discord: a reply by message_reference with a nonce; a resend of the same row is deduplicated', async () => {
    const dc = await fakeDiscord('bot-tok');
    const c = await setup([account({ name: 'dc', platform: 'discord', token_env: 'DC', api_base: `${dc.url}/api/v10` })], { DC: 'bot-tok' }, [dc]);
    dc.misbehave({ kind: '429', retryAfterS: 0.2 });
    const d = draft('dc', 'discord', { channel_id: '123', message_id: '456', guild_id: '9' }, 'a'.repeat(10));
    const [id] = send(c, [d]);
    const [row] = await settled(c, [id!]);
    expect(row).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(dc.sent[0]!.body).toMatchObject({
      content: 'a'.repeat(10),
      enforce_nonce: true,
      message_reference: { message_id: '456', fail_if_not_exists: false },
      allowed_mentions: { parse: [] },
    });
    const nonce = dc.sent[0]!.body.nonce;
    expect(typeof nonce === 'string' && nonce.length <= 25).toBe(true);
    // The same row sent again (as after a crash mid-request) carries the same nonce: no second message.
    c.stores.delivery.markRetry(id!, { code: 'x', message: 'x', status: null, retry_after_s: null }, Date.now() / 1000, Date.now() / 1000);
    c.worker.kick();
    await expect.poll(() => dc.requests.length, { timeout: 10_000 }).toBe(3);
    const [again] = await settled(c, [id!]);
    expect(again).toMatchObject({ status: 'delivered', platform_message_id: row!.platform_message_id });
    expect(dc.sent).toHaveLength(1);
  });

  it('Lark: a tenant token from app id and secret, a reply in thread with a uuid', async () => {
    const lark = await fakeLark('cli_a', 'sec');
    const c = await setup([account({ name: 'lk', platform: 'lark', token_env: 'LARK', app_id: 'cli_a', api_base: lark.url })], { LARK: 'sec' }, [lark]);
    lark.misbehave({ kind: '429', retryAfterS: 0.2 });
    const ids = send(c, [
      draft('lk', 'lark', { chat_id: 'oc_1', message_id: 'om_9', thread_id: 'omt_1' }, 'reply'),
      draft('lk', 'lark', { chat_id: 'oc_1' }, 'to chat'),
    ]);
    const rows = await settled(c, ids);
    expect(rows.map((r) => r.status)).toEqual(['delivered', 'delivered']);
    // The reply waited out its 429, so the chat message went first.
    expect(lark.sent.map((s) => s.path.split('?')[0]).sort()).toEqual(['/open-apis/im/v1/messages', '/open-apis/im/v1/messages/om_9/reply']);
    const reply = lark.sent.find((s) => s.path.endsWith('/reply'))!;
    expect(reply.body).toMatchObject({ msg_type: 'text', content: JSON.stringify({ text: 'reply' }), reply_in_thread: true });
    expect(typeof reply.body.uuid).toBe('string');
    expect(lark.sent.find((s) => !s.path.endsWith('/reply'))!.body).toMatchObject({ receive_id: 'oc_1', content: JSON.stringify({ text: 'to chat' }) });
  });

  it('Lark: a wrong app secret fails the row without sending', async () => {
    const lark = await fakeLark('cli_a', 'sec');
    const c = await setup([account({ name: 'lk', platform: 'lark', token_env: 'LARK', app_id: 'cli_a', api_base: lark.url })], { LARK: 'nope' }, [lark]);
    const [id] = send(c, [draft('lk', 'lark', { chat_id: 'oc_1' }, 'x')]);
    // A refused token exchange is retried (Lark may be down); the row is not delivered and nothing is sent.
    await expect.poll(() => c.stores.delivery.get(id!)?.error?.code, { timeout: 10_000 }).toBe('unauthorized');
    expect(lark.sent).toHaveLength(0);
  });

  it('OneBot: send_msg with reply and text segments and the access token; a wrong token is not retried', async () => {
    const ob = await fakeOneBot('acc');
    const c = await setup(
      [
        account({ name: 'qq', platform: 'onebot', token_env: 'OB', api_base: ob.url }),
        account({ name: 'qq2', platform: 'onebot', token_env: 'OB2', api_base: ob.url }),
      ],
      { OB: 'acc', OB2: 'wrong' },
      [ob],
    );
    const ids = send(c, [
      draft('qq', 'onebot', { message_type: 'group', group_id: 5, message_id: 77 }, '[CQ:at,qq=all] hi'),
      draft('qq2', 'onebot', { message_type: 'private', user_id: 6 }, 'x'),
    ]);
    const rows = await settled(c, ids);
    expect(rows[0]).toMatchObject({ status: 'delivered', platform_message_id: '1000' });
    expect(ob.sent[0]!.body).toEqual({
      message_type: 'group',
      group_id: 5,
      message: [
        { type: 'reply', data: { id: '77' } },
        { type: 'text', data: { text: '[CQ:at,qq=all] hi' } },
      ],
    });
    expect(rows[1]).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'http_403' } });
  });

  it('an edit waits for the send it edits, then edits that platform message', async () => {
    const slack = await fakeSlack('xoxb-1');
    const c = await setup([account({ name: 'sl', platform: 'slack', token_env: 'SLACK', api_base: `${slack.url}/api` })], { SLACK: 'xoxb-1' }, [slack]);
    slack.misbehave({ kind: '429', retryAfterS: 1 });
    const first = draft('sl', 'slack', { channel: 'C1' }, 'hel');
    const ids = send(c, [first, { ...first, idempotency_key: `${first.idempotency_key}:edit`, op: 'edit', text: 'hello', edits_key: first.idempotency_key }]);
    const rows = await settled(c, ids);
    expect(rows.map((r) => r.status)).toEqual(['delivered', 'delivered']);
    expect(slack.sent.map((s) => [s.path, s.body.text, s.body.ts])).toEqual([
      ['/api/chat.postMessage', 'hel', undefined],
      ['/api/chat.update', 'hello', rows[0]!.platform_message_id],
    ]);
  });

  it('recording a key twice keeps one row; rows a dead process left sending are resumed', async () => {
    const tg = await fakeTelegram('t');
    const c = await setup([account({ name: 'tg', platform: 'telegram', token_env: 'TG', api_base: tg.url })], { TG: 't' }, [tg]);
    await c.worker.close();
    const d = draft('tg', 'telegram', { chat_id: 1 }, 'once');
    const [a] = c.stores.delivery.record([d], 1);
    const [b] = c.stores.delivery.record([d], 2);
    expect(b!.id).toBe(a!.id);
    const [claimed] = c.stores.delivery.claimDue({ pid: 999_999_999, host: os.hostname() }, Date.now() / 1000, 10);
    expect(claimed?.status).toBe('sending');
    const worker = new OutboxWorker({
      store: c.stores.delivery,
      accounts: () => [account({ name: 'tg', platform: 'telegram', token_env: 'TG', api_base: tg.url })],
      env: { TG: 't' },
      warn: (m) => c.warnings.push(m),
    });
    c.worker = worker;
    worker.start();
    const [row] = await settled(c, [a!.id]);
    expect(row!.status).toBe('delivered');
    expect(tg.sent).toHaveLength(1);
    expect(c.warnings.join('\n')).toContain('resuming 1 message');
  });
});
