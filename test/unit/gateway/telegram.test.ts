// Telegram: update kinds beyond the fixtures, threads, files, and the options that fill gaps in updates.
import { describe, expect, it } from 'vitest';
import { normalizePlatformPayload } from '../../../src/core/gateway/index.js';
import { FIXTURE_CASES, loadCase } from './fixture-table.js';
import { envelopeOf, expectIgnored, refusal } from './helpers.js';

const fixture = (name: string): unknown => {
  const c = FIXTURE_CASES.find((x) => x.file === `telegram/${name}`);
  if (!c) throw new Error(`no fixture ${name}`);
  return loadCase(c);
};
const norm = (payload: unknown, opts = {}) => normalizePlatformPayload('telegram', payload, opts);
const user = { id: 42, is_bot: false, first_name: 'Ada', last_name: 'L', username: 'ada' };
const bot = { id: 99, is_bot: true, first_name: 'Helper', username: 'helper_bot' };
const group = { id: -100123, type: 'supergroup', title: 'Team' };
const member = (status: string, u = bot) => ({ status, user: u });

describe('telegram messages', () => {
  it('puts forum topics and reply threads in thread_id', () => {
    expect(envelopeOf(norm(fixture('message_topic.nutgram.json'))).thread_id).toBe('telegram:chat:-1001234567489:thread:33');
    expect(envelopeOf(norm(fixture('message_general_topic.nutgram.json'))).thread_id).toBeNull();
  });

  it('keeps the largest photo size as the image attachment, with the caption as text', () => {
    const env = envelopeOf(norm(fixture('photo.nutgram.json')));
    expect(env.input.text).toBe('asdasdasdasdasdasd');
    expect(env.input.attachments).toEqual([
      { artifact_id: 'telegram:image:SAAS', artifact_type: 'image', mime_type: null, size: 84913, name: null, source: 'platform', url: null, id: 'SAAS' },
    ]);
  });

  it('reads bot commands and mentions from entities (UTF-16 offsets)', () => {
    expect(envelopeOf(norm(fixture('command_tag_valid.nutgram.json'))).data.command).toBe('/test@foo_bot');
    const env = envelopeOf(
      norm({
        update_id: 1,
        message: { message_id: 1, date: 1, chat: group, from: user, text: '😆 @helper_bot hi', entities: [{ type: 'mention', offset: 3, length: 11 }] },
      }),
    );
    expect(env.data.mentions).toEqual(['@helper_bot']);
  });

  it('ignores service messages and messages with no content it reads', () => {
    expectIgnored(
      norm({ update_id: 2, message: { message_id: 2, date: 1, chat: group, from: user, pinned_message: { message_id: 1 } } }),
      /service message pinned_message/,
    );
    expectIgnored(norm({ update_id: 3, message: { message_id: 3, date: 1, chat: group, from: user, brand_new_thing: {} } }), /carries no content/);
  });

  it('uses receivedAt when the update has no time of its own, and botId for the bot', () => {
    const env = envelopeOf(norm(fixture('callback_query.nutgram.json'), { receivedAt: 1700000000, botId: 'telegram:99' }));
    expect(env.event_time).toBe(1700000000);
    expect(env.bot_id).toBe('telegram:99');
    expect(env.subject).toEqual({ subject_type: 'callback_query', subject_id: '666728699048485871', data: { data: 'thedata' } });
    expect(env.delivery.reply_target).toEqual({ callback_query_id: '666728699048485871', chat_id: '222222222', message_id: '69587' });
    expect(env.event_id).not.toBe(envelopeOf(norm(fixture('callback_query.nutgram.json'))).event_id);
  });

  it('gives an inline query its query as input text and no conversation', () => {
    const env = envelopeOf(norm(fixture('split_inline_query.TelegramBots.json')));
    expect(env.input.text).toBe('inline query');
    expect(env.conversation_id).toBeNull();
  });
});

describe('telegram membership and requests', () => {
  it('my_chat_member: the bot added to or removed from a chat', () => {
    const added = envelopeOf(
      norm({ update_id: 10, my_chat_member: { chat: group, from: user, date: 5, old_chat_member: member('left'), new_chat_member: member('member') } }),
    );
    expect(added).toMatchObject({ event_type: 'bot.added', conversation_id: 'telegram:chat:-100123', actor: { actor_id: '42' }, event_time: 5 });
    const removed = envelopeOf(
      norm({
        update_id: 11,
        my_chat_member: { chat: group, from: user, date: 6, old_chat_member: member('administrator'), new_chat_member: member('kicked') },
      }),
    );
    expect(removed.event_type).toBe('bot.removed');
    expect(removed.delivery.reply_target).toBeNull();
  });

  it('chat_member: somebody joining or leaving', () => {
    const joined = envelopeOf(
      norm({
        update_id: 12,
        chat_member: { chat: group, from: user, date: 5, old_chat_member: member('left', user), new_chat_member: member('member', user) },
      }),
    );
    expect(joined).toMatchObject({ event_type: 'group.member_joined', subject: { data: { members: ['42'] } } });
    const restricted = { status: 'restricted', user, is_member: false };
    const left = envelopeOf(
      norm({ update_id: 13, chat_member: { chat: group, from: user, date: 5, old_chat_member: member('member', user), new_chat_member: restricted } }),
    );
    expect(left.event_type).toBe('member.left');
  });

  it('chat_join_request becomes group.request_received with the bio as text', () => {
    const env = envelopeOf(norm({ update_id: 14, chat_join_request: { chat: group, from: user, user_chat_id: 42, date: 7, bio: 'hello' } }));
    expect(env).toMatchObject({ event_type: 'group.request_received', actor: { actor_id: '42', actor_name: 'Ada L' }, input: { text: 'hello' } });
  });

  it('message_reaction: additions are routed, removals are not', () => {
    const env = envelopeOf(
      norm({
        update_id: 15,
        message_reaction: { chat: group, message_id: 8, user, date: 9, old_reaction: [], new_reaction: [{ type: 'emoji', emoji: '👍' }] },
      }),
    );
    expect(env).toMatchObject({ event_type: 'reaction.added', subject: { subject_type: 'message', subject_id: '8', data: { reactions: ['👍'] } } });
    expectIgnored(
      norm({
        update_id: 16,
        message_reaction: { chat: group, message_id: 8, user, date: 9, old_reaction: [{ type: 'emoji', emoji: '👍' }], new_reaction: [] },
      }),
      /removed reactions only/,
    );
  });

  it('ignores update kinds it does not route', () => {
    expectIgnored(norm({ update_id: 17, poll_answer: { poll_id: 'p', option_ids: [0] } }), /update kind poll_answer is not routed/);
  });
});

describe('telegram envelopes and getUpdates responses', () => {
  it('refuses an Update with nothing but update_id', () => {
    const err = refusal(() => norm({ update_id: 1 }));
    expect(err.code).toBe('event.invalid');
    expect(err.message).toMatch(/no update kind/);
  });

  it('refuses a getUpdates response that holds more or less than one update', () => {
    const two = { ok: true, result: [{ update_id: 1 }, { update_id: 2 }] };
    const err = refusal(() => norm(two));
    expect(err.details).toMatchObject({ path: ['result'], platform: 'telegram' });
    expect(err.hint).toMatch(/one Update/);
  });

  it('reads the single update of a getUpdates response, keeping the whole response as raw', () => {
    const payload = fixture('getupdates_write_access_allowed.TelegramBots.json');
    const result = norm(payload);
    expect(result.kind === 'event' && result.raw).toBe(payload);
  });
});
