// Real platform payloads (fixtures/platform) → gateway envelope → the reply request each sender builds,
// and how each sender reads the platform's answers (rate limits, refusals).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PlatformAccountSchema, type DeliveryPlatform } from '../../../src/core/delivery/accounts.js';
import { SENDERS, type PlatformAnswer } from '../../../src/core/delivery/outbound/index.js';
import { callbackAnswerDraft, replyRoute, RunReplies, withInteractionToken } from '../../../src/core/delivery/replies.js';
import { normalizePlatformPayload } from '../../../src/core/gateway/index.js';
import { BindingSchema } from '../../../src/core/protocol/binding.js';
import { EventEnvelopeSchema } from '../../../src/core/protocol/event.js';
import type { OutboxRecord } from '../../../src/core/stores/delivery-types.js';

const fixture = (p: string): unknown => JSON.parse(readFileSync(new URL(`../../../fixtures/platform/${p}`, import.meta.url), 'utf8'));
const binding = BindingSchema.parse({ binding_id: 'b', runner_id: 'plugin:a/b/c' });

function requestFor(platform: DeliveryPlatform, gateway: 'telegram' | 'slack' | 'discord' | 'lark' | 'onebot', file: string, text = 'the answer') {
  const r = normalizePlatformPayload(gateway, fixture(file), { receivedAt: 1, botId: `${platform}:acct` });
  if (r.kind !== 'event') throw new Error(`${file}: ${r.kind}`);
  const event = EventEnvelopeSchema.parse(r.envelope);
  const account = PlatformAccountSchema.parse({ name: 'acct', platform, token_env: 'T', app_id: platform === 'lark' ? 'cli' : null });
  const route = replyRoute(event, binding, [account]);
  if (!route) throw new Error(`${file}: no reply route`);
  const [draft] = new RunReplies(route, { run_id: 'r1', event }).completed({ role: 'assistant', content: text });
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
  const req = SENDERS[platform].request({ base: 'http://api.test', token: 'TOKEN', item, nowS: 1 });
  return { req, body: JSON.parse(req.body) as Record<string, unknown>, event };
}

const answer = (status: number, json: unknown, headers: Record<string, string> = {}): PlatformAnswer => ({
  status,
  json,
  text: JSON.stringify(json),
  header: (n) => headers[n.toLowerCase()] ?? null,
});

describe('reply requests from real platform payloads', () => {
  it('Telegram: sendMessage to the chat, replying to the message, in its forum topic', () => {
    const { req, body, event } = requestFor('telegram', 'telegram', 'telegram/message_topic.nutgram.json');
    expect(req.url).toBe('http://api.test/botTOKEN/sendMessage');
    const target = event.delivery.reply_target!;
    expect(body).toEqual({
      chat_id: Number(target.chat_id),
      text: 'the answer',
      message_thread_id: Number(target.message_thread_id),
      reply_parameters: { message_id: Number(target.message_id), allow_sending_without_reply: true },
    });
  });
  it('Slack: chat.postMessage to the channel with the bot token', () => {
    const { req, body, event } = requestFor('slack', 'slack', 'slack/event_callback.message.channels.slack-docs.json');
    expect(req.url).toBe('http://api.test/chat.postMessage');
    expect(req.headers.authorization).toBe('Bearer TOKEN');
    expect(body).toMatchObject({ channel: event.delivery.reply_target!.channel, text: 'the answer' });
  });
  it('Discord: a channel message referencing the message, no mentions parsed', () => {
    const { req, body, event } = requestFor('discord', 'discord', 'discord/MESSAGE_CREATE.d.serenity-1.json');
    const t = event.delivery.reply_target!;
    expect(req.url).toBe(`http://api.test/channels/${String(t.channel_id)}/messages`);
    expect(req.headers.authorization).toBe('Bot TOKEN');
    expect(body).toMatchObject({ content: 'the answer', message_reference: { message_id: t.message_id }, allowed_mentions: { parse: [] } });
  });
  it('Lark: a reply to the message', () => {
    const { req, body, event } = requestFor('lark', 'lark', 'lark/im.message.receive_v1.feishu-docs.json');
    expect(req.url).toBe(`http://api.test/open-apis/im/v1/messages/${String(event.delivery.reply_target!.message_id)}/reply`);
    expect(body).toMatchObject({ msg_type: 'text', content: JSON.stringify({ text: 'the answer' }) });
  });
  it('OneBot: send_msg to the group with a reply segment; runner text is never parsed as CQ codes', () => {
    const { req, body, event } = requestFor('onebot', 'onebot', 'onebot11/group_message.nonebot.json', '[CQ:at,qq=all]');
    expect(req.url).toBe('http://api.test/send_msg');
    const t = event.delivery.reply_target!;
    expect(body).toEqual({
      message_type: 'group',
      group_id: Number(t.group_id),
      message: [
        { type: 'reply', data: { id: String(t.message_id) } },
        { type: 'text', data: { text: '[CQ:at,qq=all]' } },
      ],
    });
  });
});

describe('reading platform answers', () => {
  it('rate limits carry the platform wait: Telegram body, Slack header, Discord body, Lark reset header', () => {
    expect(SENDERS.telegram.read(answer(429, { ok: false, error_code: 429, description: 'Too Many Requests', parameters: { retry_after: 7 } }))).toMatchObject({
      kind: 'retry',
      error: { retry_after_s: 7 },
    });
    expect(SENDERS.slack.read(answer(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '30' }))).toMatchObject({
      kind: 'retry',
      error: { retry_after_s: 30 },
    });
    expect(SENDERS.discord.read(answer(429, { message: 'rate limited', retry_after: 0.5, global: false }, { 'retry-after': '1' }))).toMatchObject({
      kind: 'retry',
      error: { retry_after_s: 0.5 },
    });
    expect(SENDERS.lark.read(answer(429, { code: 99991400, msg: 'limit' }, { 'x-ogw-ratelimit-reset': '3' }))).toMatchObject({
      kind: 'retry',
      error: { retry_after_s: 3 },
    });
    const date = new Date(Date.now() + 60_000).toUTCString();
    const s = SENDERS.slack.read(answer(429, {}, { 'retry-after': date }));
    expect(s.kind === 'retry' && (s.error.retry_after_s ?? 0) > 50).toBe(true);
  });
  it('refusals fail with the platform error; Slack answers 200 with ok:false', () => {
    expect(SENDERS.telegram.read(answer(400, { ok: false, error_code: 400, description: 'Bad Request: chat not found' }))).toMatchObject({
      kind: 'failed',
      error: { code: 'telegram_400', message: 'Bad Request: chat not found' },
    });
    expect(SENDERS.slack.read(answer(200, { ok: false, error: 'channel_not_found' }))).toMatchObject({
      kind: 'failed',
      error: { code: 'slack_channel_not_found' },
    });
    expect(SENDERS.slack.read(answer(200, { ok: false, error: 'internal_error' })).kind).toBe('retry');
    expect(SENDERS.onebot.read(answer(200, { status: 'failed', retcode: 100, data: null }))).toMatchObject({ kind: 'failed', error: { code: 'onebot_100' } });
    expect(SENDERS.lark.read(answer(400, { code: 99991663, msg: 'token expired' })).kind).toBe('reauth');
    expect(SENDERS.discord.read(answer(502, null)).kind).toBe('retry');
  });
  it('a hostile answer body is cut to a short excerpt', () => {
    const out = SENDERS.telegram.read({ status: 400, json: null, text: 'x'.repeat(100_000), header: () => null });
    expect(out.kind === 'failed' && out.error.message.length <= 300).toBe(true);
  });
});

describe('Discord interaction replies', () => {
  const raw = { ...(fixture('discord/interaction.slash_command.discord-docs.json') as Record<string, unknown>), application_id: '1800000000000000001' };
  const r = normalizePlatformPayload('discord', raw, { receivedAt: 1, botId: 'discord:acct' });
  if (r.kind !== 'event') throw new Error(r.kind);
  const event = EventEnvelopeSchema.parse(r.envelope);
  const account = PlatformAccountSchema.parse({ name: 'acct', platform: 'discord', token_env: 'T' });
  const route = withInteractionToken(replyRoute(event, binding, [account])!, event, raw);
  const rows = new RunReplies(route, { run_id: 'r1', event }).completed({ role: 'assistant', content: 'first' });
  const second = new RunReplies(route, { run_id: 'r1', event });
  second.completed({ role: 'assistant', content: 'first' });
  const followUp = second.completed({ role: 'assistant', content: 'second' });
  const record = (d: (typeof rows)[number], extra: Partial<OutboxRecord> = {}): OutboxRecord => ({
    ...d,
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
    ...extra,
  });
  const hook = 'http://api.test/webhooks/1800000000000000001/A_UNIQUE_TOKEN';

  it('the token comes from the raw body, never the envelope', () => {
    expect(JSON.stringify(event)).not.toContain('A_UNIQUE_TOKEN');
    expect(route.target).toMatchObject({ interaction_token: 'A_UNIQUE_TOKEN', application_id: '1800000000000000001' });
  });

  it('the first message edits the deferred response, later ones follow up, edits patch the sent message; no bot token sent', () => {
    const first = SENDERS.discord.request({ base: 'http://api.test', token: 'TOKEN', item: record(rows[0]!), nowS: 1 });
    expect(first).toMatchObject({ method: 'PATCH', url: `${hook}/messages/@original` });
    expect(first.headers.authorization).toBeUndefined();
    expect(JSON.parse(first.body)).toEqual({ content: 'first', allowed_mentions: { parse: [] } });
    const next = SENDERS.discord.request({ base: 'http://api.test', token: 'TOKEN', item: record(followUp[0]!), nowS: 1 });
    expect(next).toMatchObject({ method: 'POST', url: `${hook}?wait=true` });
    const edit = SENDERS.discord.request({
      base: 'http://api.test',
      token: 'TOKEN',
      item: record({ ...followUp[0]!, op: 'edit' }, { edits_message_id: '99' }),
      nowS: 1,
    });
    expect(edit).toMatchObject({ method: 'PATCH', url: `${hook}/messages/99` });
  });

  it('a gateway INTERACTION_CREATE or a body without application_id keeps the channel-message reply', () => {
    const bare = fixture('discord/interaction.slash_command.discord-docs.json');
    const plain = withInteractionToken(replyRoute(event, binding, [account])!, event, { op: 0, t: 'INTERACTION_CREATE', d: raw });
    expect(plain.target.interaction_token).toBeUndefined();
    const r2 = normalizePlatformPayload('discord', bare, { receivedAt: 1, botId: 'discord:acct' });
    if (r2.kind !== 'event') throw new Error(r2.kind);
    const e2 = EventEnvelopeSchema.parse(r2.envelope);
    expect(withInteractionToken(replyRoute(e2, binding, [account])!, e2, bare).target.interaction_token).toBeUndefined();
  });
});

describe('Telegram button presses', () => {
  it('a callback_query is answered by answerCallbackQuery as its run starts; other events get no answer row', () => {
    const r = normalizePlatformPayload('telegram', fixture('telegram/callback_query.nutgram.json'), { receivedAt: 1, botId: 'telegram:acct' });
    if (r.kind !== 'event') throw new Error(r.kind);
    const event = EventEnvelopeSchema.parse(r.envelope);
    const account = PlatformAccountSchema.parse({ name: 'acct', platform: 'telegram', token_env: 'T' });
    const draft = callbackAnswerDraft(replyRoute(event, binding, [account])!, event, 'r9');
    expect(draft).toMatchObject({ idempotency_key: 'r9:answer', op: 'send', target: { callback_query_id: '666728699048485871', answer_callback_query: true } });
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
    const req = SENDERS.telegram.request({ base: 'http://api.test', token: 'TOKEN', item, nowS: 1 });
    expect(req).toMatchObject({ method: 'POST', url: 'http://api.test/botTOKEN/answerCallbackQuery' });
    expect(JSON.parse(req.body)).toEqual({ callback_query_id: '666728699048485871' });
    expect(SENDERS.telegram.read({ status: 200, json: { ok: true, result: true }, text: '', header: () => null })).toEqual({
      kind: 'delivered',
      message_id: null,
    });
    const { event: message } = requestFor('telegram', 'telegram', 'telegram/private_text.teloxide.json');
    expect(callbackAnswerDraft(replyRoute(message, binding, [account])!, message, 'r9')).toBeNull();
  });
});
