// Slack Events API: message subtypes, files, threads and membership (bodies shaped like Slack's documented examples).
import { describe, expect, it } from 'vitest';
import { normalizePlatformPayload } from '../../../src/core/gateway/index.js';
import { FIXTURE_CASES, loadCase } from './fixture-table.js';
import { envelopeOf, expectIgnored, refusal } from './helpers.js';

const callback = (event: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  token: 'verification-token',
  team_id: 'T1',
  api_app_id: 'A1',
  type: 'event_callback',
  event_id: 'Ev1',
  event_time: 1700000000,
  event,
  ...extra,
});
const norm = (payload: unknown) => normalizePlatformPayload('slack', payload);

describe('slack messages', () => {
  it('a reply in a thread has a thread_id and a reply target in that thread', () => {
    const env = envelopeOf(
      norm(callback({ type: 'message', channel: 'C1', user: 'U1', text: 'hi <@U2|bob> and <@W3>', ts: '1700000001.000200', thread_ts: '1700000000.000100' })),
    );
    expect(env.thread_id).toBe('slack:T1:C1:thread:1700000000.000100');
    expect(env.delivery.reply_target).toEqual({ channel: 'C1', ts: '1700000001.000200', thread_ts: '1700000000.000100' });
    expect(env.data.mentions).toEqual(['U2', 'W3']);
    expect(env.bot_id).toBe('slack:A1');
  });

  it('file_share messages carry their files as attachments (url_private, never fetched)', () => {
    const env = envelopeOf(
      norm(
        callback({
          type: 'message',
          subtype: 'file_share',
          channel: 'C1',
          user: 'U1',
          text: '',
          ts: '1.2',
          files: [
            { id: 'F1', name: 'cat.png', mimetype: 'image/png', size: 10, url_private: 'https://files.slack.com/F1' },
            { id: 'F2', name: 'notes.txt', mimetype: 'text/plain', size: 3 },
          ],
        }),
      ),
    );
    expect(env.input.text).toBeNull();
    expect(env.input.attachments.map((a) => [a.artifact_type, a.id, a.url, a.name])).toEqual([
      ['image', 'F1', 'https://files.slack.com/F1', 'cat.png'],
      ['file', 'F2', null, 'notes.txt'],
    ]);
    expect(env.source_event_type).toBe('message.file_share');
  });

  it('message_changed becomes message.edited with the new text', () => {
    const env = envelopeOf(
      norm(
        callback({
          type: 'message',
          subtype: 'message_changed',
          channel: 'C1',
          ts: '5.0',
          message: { type: 'message', user: 'U1', text: 'fixed', ts: '4.0', edited: { user: 'U1', ts: '5.0' } },
          previous_message: { type: 'message', user: 'U1', text: 'fxied', ts: '4.0' },
        }),
      ),
    );
    expect(env).toMatchObject({ event_type: 'message.edited', actor: { actor_id: 'U1' }, subject: { subject_id: '4.0' } });
    expect(env.input.text).toBe('fixed');
  });

  it('message_deleted becomes message.recalled with a system actor', () => {
    const env = envelopeOf(
      norm(callback({ type: 'message', subtype: 'message_deleted', channel: 'C1', ts: '6.0', deleted_ts: '4.0', previous_message: { user: 'U1' } })),
    );
    expect(env).toMatchObject({
      event_type: 'message.recalled',
      actor: { actor_type: 'system', actor_id: null },
      subject: { subject_id: '4.0', data: { author_id: 'U1' } },
    });
  });

  it('bot messages have a bot actor', () => {
    const env = envelopeOf(norm(callback({ type: 'message', subtype: 'bot_message', channel: 'C1', bot_id: 'B1', text: 'beep', ts: '1.0' })));
    expect(env.actor).toMatchObject({ actor_type: 'bot', actor_id: 'B1' });
  });

  it('ignores other subtypes and event types', () => {
    expectIgnored(norm(callback({ type: 'message', subtype: 'channel_join', channel: 'C1', user: 'U1', ts: '1.0' })), /subtype channel_join/);
    expectIgnored(norm(callback({ type: 'team_join', user: { id: 'U1' } })), /team_join is not routed/);
    expectIgnored(norm({ token: 't', type: 'app_rate_limited', team_id: 'T1', minute_rate_limited: 1518467820, api_app_id: 'A1' }), /rate-limit/);
  });

  it('marks app mentions', () => {
    const c = FIXTURE_CASES.find((x) => x.file === 'slack/inner_event.app_mention.slack-docs.json');
    if (!c) throw new Error('fixture case missing');
    expect(envelopeOf(norm(loadCase(c))).data).toMatchObject({ mentioned: true, mentions: ['U0LAN0Z89'] });
  });
});

describe('slack membership and ids', () => {
  it('member_joined_channel: the inviter is the actor, the member is in the subject', () => {
    const env = envelopeOf(norm(callback({ type: 'member_joined_channel', user: 'U9', channel: 'C1', channel_type: 'C', team: 'T1', inviter: 'U1' })));
    expect(env).toMatchObject({
      event_type: 'group.member_joined',
      actor: { actor_id: 'U1' },
      subject: { subject_type: 'group', subject_id: 'C1', data: { members: ['U9'] } },
    });
    expect(envelopeOf(norm(callback({ type: 'member_left_channel', user: 'U9', channel: 'C1' }))).event_type).toBe('member.left');
  });

  it('uses event_time, else the event timestamp', () => {
    expect(envelopeOf(norm(callback({ type: 'message', channel: 'C1', user: 'U1', text: 'x', ts: '1.0' }))).event_time).toBe(1700000000);
    const noTime = callback({ type: 'message', channel: 'C1', user: 'U1', text: 'x', ts: '1355517523.000005' }, { event_time: undefined });
    expect(envelopeOf(norm(JSON.parse(JSON.stringify(noTime)))).event_time).toBe(1355517523);
  });

  it('a retry with the same event_id gets the same envelope id; another event_id gets another', () => {
    const a = envelopeOf(norm(callback({ type: 'message', channel: 'C1', user: 'U1', text: 'x', ts: '1.0' })));
    const retry = envelopeOf(norm(callback({ type: 'message', channel: 'C1', user: 'U1', text: 'x', ts: '1.0' })));
    const other = envelopeOf(norm(callback({ type: 'message', channel: 'C1', user: 'U1', text: 'x', ts: '1.0' }, { event_id: 'Ev2' })));
    expect(retry.event_id).toBe(a.event_id);
    expect(other.event_id).not.toBe(a.event_id);
  });

  it('refuses bodies that are not Events API callbacks, naming type', () => {
    const err = refusal(() => norm({ type: 'block_actions', team: { id: 'T1' } }));
    expect(err.details).toMatchObject({ path: ['type'], platform: 'slack' });
    expect(err.message).toMatch(/expected "event_callback" or "url_verification", got "block_actions"/);
  });
});
