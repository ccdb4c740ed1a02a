// OneBot v11: segment arrays, CQ codes, notices and requests (payloads written from the OneBot v11 field tables).
import { describe, expect, it } from 'vitest';
import { normalizePlatformPayload } from '../../../src/core/gateway/index.js';
import { parseCqString } from '../../../src/core/gateway/onebot-message.js';
import { envelopeOf, expectIgnored, refusal } from './helpers.js';

const SELF = 10001;
const post = (fields: Record<string, unknown>): Record<string, unknown> => ({ time: 1700000000, self_id: SELF, ...fields });
const notice = (fields: Record<string, unknown>): Record<string, unknown> => post({ post_type: 'notice', ...fields });
const norm = (payload: unknown, botId?: string) => normalizePlatformPayload('onebot', payload, botId ? { botId } : {});

describe('onebot messages', () => {
  it('reads a segment array: text, image, voice, mention and reply', () => {
    const env = envelopeOf(
      norm(
        post({
          post_type: 'message',
          message_type: 'group',
          sub_type: 'normal',
          message_id: 42,
          user_id: 2002,
          group_id: 3003,
          message: [
            { type: 'reply', data: { id: '41' } },
            { type: 'at', data: { qq: '10001' } },
            { type: 'text', data: { text: ' look ' } },
            { type: 'image', data: { file: 'abc.image', url: 'https://example.invalid/abc.png' } },
            { type: 'record', data: { file: 'v.amr' } },
            { type: 'text', data: { text: 'here' } },
          ],
          sender: { user_id: 2002, nickname: 'Nick', card: 'Card', role: 'admin' },
        }),
      ),
    );
    expect(env.input.text).toBe(' look here');
    expect(env.input.contents).toEqual([
      { type: 'text', text: ' look ' },
      { type: 'image_url', image_url: { url: 'https://example.invalid/abc.png' } },
      { type: 'text', text: 'here' },
    ]);
    expect(env.input.attachments.map((a) => [a.artifact_type, a.id, a.url, a.source])).toEqual([
      ['image', 'abc.image', 'https://example.invalid/abc.png', 'platform'],
      ['voice', 'v.amr', null, 'platform'],
    ]);
    expect(env.actor).toEqual({ actor_type: 'user', actor_id: '2002', actor_name: 'Card', metadata: { nickname: 'Nick', card: 'Card', role: 'admin' } });
    expect(env.data.mentions).toEqual(['10001']);
    expect(env.bot_id).toBe('onebot:10001');
    expect(env.delivery.reply_target).toEqual({ message_type: 'group', group_id: '3003', message_id: '42' });
    expect(env.input.message_chain).toHaveLength(6);
  });

  it('parses CQ codes and undoes their escapes', () => {
    expect(parseCqString('a &#91;x&#93; &amp; [CQ:image,file=1.png,url=https://h/x?a=1&amp;b=2&#44;3]b')).toEqual([
      { type: 'text', data: { text: 'a [x] & ' } },
      { type: 'image', data: { file: '1.png', url: 'https://h/x?a=1&b=2,3' } },
      { type: 'text', data: { text: 'b' } },
    ]);
    expect(parseCqString('[CQ:face,id=14]')).toEqual([{ type: 'face', data: { id: '14' } }]);
  });

  it('names the segment field when a segment we read is malformed', () => {
    const err = refusal(() =>
      norm(
        post({
          post_type: 'message',
          message_type: 'private',
          message_id: 1,
          user_id: 2,
          message: [{ type: 'image', data: { url: 'x' } }],
        }),
      ),
    );
    expect(err.details).toMatchObject({ path: ['message', 0, 'data', 'file'], platform: 'onebot' });
  });

  it('keeps an anonymous group sender anonymous', () => {
    const env = envelopeOf(
      norm(
        post({
          post_type: 'message',
          message_type: 'group',
          message_id: 5,
          user_id: 80000000,
          group_id: 3003,
          message: 'hi',
          anonymous: { id: 123, name: 'Masked', flag: 'f' },
        }),
      ),
    );
    expect(env.actor).toMatchObject({ actor_id: '123', actor_name: 'Masked', metadata: { anonymous: true } });
  });

  it('derives a different event id per bot, and the same id on redelivery', () => {
    const payload = post({ post_type: 'message', message_type: 'private', message_id: 1, user_id: 2, message: 'x' });
    expect(envelopeOf(norm(payload)).event_id).toBe(envelopeOf(norm(structuredClone(payload))).event_id);
    const other = envelopeOf(norm(payload, 'qq-main'));
    expect(other.bot_id).toBe('qq-main');
    expect(other.event_id).not.toBe(envelopeOf(norm(payload)).event_id);
  });
});

describe('onebot notices', () => {
  it('group_increase (approve): the new member joined; the actor is the member', () => {
    const env = envelopeOf(norm(notice({ notice_type: 'group_increase', sub_type: 'approve', group_id: 3003, operator_id: 9, user_id: 2002 })));
    expect(env).toMatchObject({ event_type: 'group.member_joined', conversation_id: 'onebot:group:3003', source_event_type: 'notice.group_increase' });
    expect(env.actor?.actor_id).toBe('2002');
    expect(env.subject).toEqual({ subject_type: 'group', subject_id: '3003', data: { members: ['2002'] } });
    expect(env.input).toEqual({ text: null, contents: [], attachments: [], message_chain: null });
  });

  it('group_increase (invite): the actor is the inviter', () => {
    expect(envelopeOf(norm(notice({ notice_type: 'group_increase', sub_type: 'invite', group_id: 3003, operator_id: 9, user_id: 2002 }))).actor?.actor_id).toBe(
      '9',
    );
  });

  it('the bot itself joining or being kicked becomes bot.added / bot.removed', () => {
    expect(envelopeOf(norm(notice({ notice_type: 'group_increase', sub_type: 'invite', group_id: 3003, operator_id: 9, user_id: SELF }))).event_type).toBe(
      'bot.added',
    );
    expect(envelopeOf(norm(notice({ notice_type: 'group_decrease', sub_type: 'kick_me', group_id: 3003, operator_id: 9, user_id: SELF }))).event_type).toBe(
      'bot.removed',
    );
  });

  it('group_decrease (leave / kick) becomes member.left', () => {
    const left = envelopeOf(norm(notice({ notice_type: 'group_decrease', sub_type: 'leave', group_id: 3003, operator_id: 0, user_id: 2002 })));
    expect(left).toMatchObject({ event_type: 'member.left', actor: { actor_id: '2002' } });
    const kicked = envelopeOf(norm(notice({ notice_type: 'group_decrease', sub_type: 'kick', group_id: 3003, operator_id: 9, user_id: 2002 })));
    expect(kicked.actor?.actor_id).toBe('9');
  });

  it('group_recall and friend_recall become message.recalled with the operator as actor', () => {
    const g = envelopeOf(norm(notice({ notice_type: 'group_recall', group_id: 3003, user_id: 2002, operator_id: 9, message_id: 77 })));
    expect(g).toMatchObject({
      event_type: 'message.recalled',
      conversation_id: 'onebot:group:3003',
      actor: { actor_id: '9' },
      subject: { subject_type: 'message', subject_id: '77', data: { author_id: '2002' } },
    });
    expect(g.input.text).toBeNull();
    const f = envelopeOf(norm(notice({ notice_type: 'friend_recall', user_id: 2002, message_id: 78 })));
    expect(f).toMatchObject({ event_type: 'message.recalled', conversation_id: 'onebot:private:2002', actor: { actor_id: '2002' } });
  });

  it('refuses a group_recall without group_id, naming it', () => {
    expect(refusal(() => norm(notice({ notice_type: 'group_recall', user_id: 2002, message_id: 77 }))).details).toMatchObject({ path: ['group_id'] });
  });

  it('group_upload is a file message: an attachment, no text', () => {
    const env = envelopeOf(
      norm(notice({ notice_type: 'group_upload', group_id: 3003, user_id: 2002, file: { id: '/abc', name: 'a.pdf', size: 10, busid: 102 } })),
    );
    expect(env.event_type).toBe('message.received');
    expect(env.input.text).toBeNull();
    expect(env.input.attachments).toEqual([
      { artifact_id: 'onebot:file:/abc', artifact_type: 'file', mime_type: null, size: 10, name: 'a.pdf', source: 'platform', url: null, id: '/abc' },
    ]);
  });

  it('friend_add becomes friend.added', () => {
    expect(envelopeOf(norm(notice({ notice_type: 'friend_add', user_id: 2002 })))).toMatchObject({
      event_type: 'friend.added',
      conversation_id: 'onebot:private:2002',
    });
  });

  it("ignores notices it does not route, meta events and the bot's own messages", () => {
    expectIgnored(norm(notice({ notice_type: 'notify', sub_type: 'poke', user_id: 1, target_id: 2 })), /notice notify is not routed/);
    expectIgnored(norm(post({ post_type: 'meta_event', meta_event_type: 'heartbeat', interval: 5000 })), /meta_event/);
    expectIgnored(norm(post({ post_type: 'message_sent', message_type: 'private', message_id: 1, user_id: 2, message: 'x' })), /own outgoing/);
  });
});

describe('onebot requests', () => {
  it('a friend request: the comment is the input text, the flag identifies the request', () => {
    const env = envelopeOf(norm(post({ post_type: 'request', request_type: 'friend', user_id: 2002, comment: 'I am Bob', flag: 'flag-1' })));
    expect(env).toMatchObject({
      event_type: 'friend.request_received',
      source_event_type: 'request.friend',
      conversation_id: 'onebot:private:2002',
      actor: { actor_id: '2002' },
      subject: { subject_type: 'request', subject_id: 'flag-1' },
      data: { request_type: 'friend', flag: 'flag-1' },
    });
    expect(env.input.text).toBe('I am Bob');
    expect(env.input.contents).toEqual([]);
  });

  it('a group invite becomes group.request_received', () => {
    const env = envelopeOf(
      norm(post({ post_type: 'request', request_type: 'group', sub_type: 'invite', group_id: 3003, user_id: 2002, comment: '', flag: 'flag-2' })),
    );
    expect(env).toMatchObject({ event_type: 'group.request_received', conversation_id: 'onebot:group:3003', data: { sub_type: 'invite', group_id: '3003' } });
    expect(env.input.text).toBeNull();
  });

  it('refuses an unknown post_type or request_type, naming the field', () => {
    expect(refusal(() => norm(post({ post_type: 'gossip' }))).details).toMatchObject({ path: ['post_type'], platform: 'onebot' });
    expect(refusal(() => norm(post({ post_type: 'request', request_type: 'hug', user_id: 1, flag: 'f' }))).details).toMatchObject({ path: ['request_type'] });
  });
});
