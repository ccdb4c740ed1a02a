// Lark/Feishu: message content types, membership, reactions and the url_verification handshake.
import { describe, expect, it } from 'vitest';
import { normalizePlatformPayload } from '../../../src/core/gateway/index.js';
import { envelopeOf, expectIgnored, refusal } from './helpers.js';

const ids = { open_id: 'ou_1', union_id: 'on_1', user_id: 'u1' };
const body = (event_type: string, event: Record<string, unknown>) => ({
  schema: '2.0',
  header: { event_id: `ev-${event_type}`, event_type, create_time: '1700000000123', token: 'tok', app_id: 'cli_1', tenant_key: 't1' },
  event,
});
const message = (message_type: string, content: unknown, extra: Record<string, unknown> = {}) =>
  body('im.message.receive_v1', {
    sender: { sender_id: ids, sender_type: 'user', tenant_key: 't1' },
    message: { message_id: 'om_1', create_time: '1700000001000', chat_id: 'oc_1', chat_type: 'p2p', message_type, content: JSON.stringify(content), ...extra },
  });
const norm = (payload: unknown) => normalizePlatformPayload('lark', payload);

describe('lark messages', () => {
  it('a text message', () => {
    const env = envelopeOf(norm(message('text', { text: 'hello' })));
    expect(env).toMatchObject({
      event_type: 'message.received',
      event_time: 1700000001,
      bot_id: 'lark:cli_1',
      conversation_id: 'lark:chat:oc_1',
      thread_id: null,
      actor: { actor_type: 'user', actor_id: 'ou_1', metadata: { user_id: 'u1', union_id: 'on_1' } },
      delivery: { reply_target: { chat_id: 'oc_1', message_id: 'om_1' } },
    });
    expect(env.input.text).toBe('hello');
  });

  it('image, file, audio and media messages become attachments keyed by the platform file key', () => {
    expect(envelopeOf(norm(message('image', { image_key: 'img_1' }))).input.attachments.map((a) => [a.artifact_type, a.id])).toEqual([['image', 'img_1']]);
    expect(envelopeOf(norm(message('file', { file_key: 'file_1', file_name: 'a.pdf' }))).input.attachments.map((a) => [a.artifact_type, a.id, a.name])).toEqual(
      [['file', 'file_1', 'a.pdf']],
    );
    expect(envelopeOf(norm(message('audio', { file_key: 'file_2', duration: 3 }))).input.attachments[0]?.artifact_type).toBe('voice');
    expect(envelopeOf(norm(message('media', { file_key: 'file_3', image_key: 'img_3', file_name: 'v.mp4' }))).input.attachments[0]?.artifact_type).toBe(
      'video',
    );
  });

  it('a rich-text post keeps its paragraphs as text and its images as attachments', () => {
    const env = envelopeOf(
      norm(
        message('post', {
          title: 'Report',
          content: [
            [
              { tag: 'text', text: 'line one ' },
              { tag: 'at', user_id: 'ou_2', user_name: 'Tom' },
            ],
            [
              { tag: 'img', image_key: 'img_9' },
              { tag: 'a', text: 'link', href: 'https://x' },
            ],
          ],
        }),
      ),
    );
    expect(env.input.text).toBe('Report\nline one @Tom\nlink');
    expect(env.input.attachments.map((a) => a.id)).toEqual(['img_9']);
  });

  it('names the content field when it does not match its message type', () => {
    expect(refusal(() => norm(message('text', { txt: 'x' }))).details).toMatchObject({ path: ['event', 'message', 'content', 'text'], platform: 'lark' });
    expect(refusal(() => norm(message('image', {}))).details).toMatchObject({ path: ['event', 'message', 'content', 'image_key'] });
  });

  it('a thread message has a thread id; system messages are not routed', () => {
    expect(envelopeOf(norm(message('text', { text: 'x' }, { thread_id: 'omt_1' }))).thread_id).toBe('lark:chat:oc_1:thread:omt_1');
    expectIgnored(norm(message('system', { template: 'x' })), /system messages/);
  });

  it('an app sender is a bot actor', () => {
    const payload = message('text', { text: 'x' });
    payload.event.sender = { sender_id: ids, sender_type: 'app' };
    expect(envelopeOf(norm(payload)).actor?.actor_type).toBe('bot');
  });
});

describe('lark membership, reactions and handshakes', () => {
  it('users leaving and the bot being removed', () => {
    const users = [{ name: 'A', tenant_key: 't1', user_id: ids }];
    expect(envelopeOf(norm(body('im.chat.member.user.deleted_v1', { chat_id: 'oc_1', operator_id: ids, users })))).toMatchObject({
      event_type: 'member.left',
      subject: { data: { members: ['ou_1'] } },
    });
    expect(envelopeOf(norm(body('im.chat.member.user.withdrawn_v1', { chat_id: 'oc_1', users })))).toMatchObject({
      event_type: 'member.left',
      actor: { actor_id: 'ou_1', actor_name: 'A' },
    });
    const removed = envelopeOf(norm(body('im.chat.member.bot.deleted_v1', { chat_id: 'oc_1', operator_id: ids })));
    expect(removed).toMatchObject({ event_type: 'bot.removed', delivery: { reply_target: null } });
  });

  it('a reaction on a message', () => {
    const env = envelopeOf(
      norm(
        body('im.message.reaction.created_v1', {
          message_id: 'om_1',
          reaction_type: { emoji_type: 'SMILE' },
          operator_type: 'user',
          user_id: ids,
          action_time: '1700000005000',
        }),
      ),
    );
    expect(env).toMatchObject({
      event_type: 'reaction.added',
      event_time: 1700000005,
      conversation_id: null,
      subject: { subject_id: 'om_1', data: { reactions: ['SMILE'] } },
    });
  });

  it('answers url_verification with the challenge', () => {
    expect(norm({ challenge: 'ajls384kdjx98XX', token: 'xxxxxx', type: 'url_verification' })).toEqual({
      kind: 'challenge',
      platform: 'lark',
      response: { challenge: 'ajls384kdjx98XX' },
    });
  });

  it('ignores event types it does not route and refuses non-2.0 schemas', () => {
    expectIgnored(norm(body('im.message.message_read_v1', { reader: {} })), /message_read_v1 is not routed/);
    expect(refusal(() => norm({ ...body('x', {}), schema: '3.0' })).details).toMatchObject({ path: ['schema'] });
  });

  it('two deliveries of the same event share an id; the event type is part of it', () => {
    const a = envelopeOf(norm(message('text', { text: 'x' })));
    expect(envelopeOf(norm(message('text', { text: 'x' }))).event_id).toBe(a.event_id);
    const sameHeaderId = { ...body('im.message.recalled_v1', { message_id: 'om_1', chat_id: 'oc_1' }) };
    sameHeaderId.header.event_id = 'ev-im.message.receive_v1';
    expect(envelopeOf(norm(sameHeaderId)).event_id).not.toBe(a.event_id);
  });
});
