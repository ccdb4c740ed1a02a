// Discord: the gateway wrapper, more dispatches, interaction kinds and attachments.
import { describe, expect, it } from 'vitest';
import { normalizePlatformPayload } from '../../../src/core/gateway/index.js';
import { isRecord } from '../../../src/core/json.js';
import { FIXTURE_CASES, loadCase, mutateAt, DELETE } from './fixture-table.js';
import { envelopeOf, expectIgnored, refusal } from './helpers.js';

const fixture = (name: string): unknown => {
  const c = FIXTURE_CASES.find((x) => x.file === `discord/${name}`);
  if (!c) throw new Error(`no fixture ${name}`);
  return loadCase(c);
};
const message = (): Record<string, unknown> => {
  const d = fixture('message.example.discord-docs.json');
  if (!isRecord(d)) throw new Error('fixture is not an object');
  return d;
};
const norm = (payload: unknown) => normalizePlatformPayload('discord', payload);
const dispatch = (t: string, d: unknown, s = 7) => ({ op: 0, s, t, d });
const author = { id: '53908099506183680', username: 'mason', global_name: 'Mason' };

describe('discord gateway payloads', () => {
  it('a MESSAGE_CREATE dispatch normalizes like its bare d object', () => {
    const d = fixture('message.example.discord-docs.json');
    expect(norm(dispatch('MESSAGE_CREATE', d))).toEqual({ ...norm(d), raw: dispatch('MESSAGE_CREATE', d) });
  });

  it('prefixes error paths with d inside a dispatch', () => {
    const d = mutateAt(fixture('message.example.discord-docs.json'), ['author'], DELETE);
    expect(refusal(() => norm(dispatch('MESSAGE_CREATE', d))).details).toMatchObject({ path: ['d', 'author'], platform: 'discord' });
  });

  it('ignores control opcodes and refuses a dispatch without t', () => {
    expectIgnored(norm({ op: 11, d: null }), /opcode 11 \(heartbeat ack\)/);
    expectIgnored(norm({ op: 10, d: { heartbeat_interval: 41250 } }), /hello/);
    expect(refusal(() => norm({ op: 0, d: {}, s: 1 })).details).toMatchObject({ path: ['t'] });
  });

  it('refuses an object that is no Discord shape at all', () => {
    const err = refusal(() => norm({ hello: 1 }));
    expect(err.details).toMatchObject({ path: [], platform: 'discord' });
    expect(err.message).toMatch(/not a Discord payload/);
  });
});

describe('discord dispatches', () => {
  it('image attachments become an image_url content and an image artifact; other files a file artifact', () => {
    const d = {
      ...message(),
      attachments: [
        { id: '1', filename: 'a.png', url: 'https://cdn.discordapp.com/a.png', size: 5, content_type: 'image/png' },
        { id: '2', filename: 'b.zip', url: 'https://cdn.discordapp.com/b.zip', size: 6 },
      ],
    };
    const env = envelopeOf(norm(d));
    expect(env.input.contents).toEqual([
      { type: 'text', text: 'Supa Hot' },
      { type: 'image_url', image_url: { url: 'https://cdn.discordapp.com/a.png' } },
    ]);
    expect(env.input.text).toBe('Supa Hot');
    expect(env.input.attachments.map((a) => [a.artifact_type, a.id, a.name, a.mime_type])).toEqual([
      ['image', '1', 'a.png', 'image/png'],
      ['file', '2', 'b.zip', null],
    ]);
  });

  it('system message types are not routed', () => {
    expectIgnored(norm({ ...message(), type: 7 }), /type 7 is a system message/);
  });

  it('MESSAGE_UPDATE with an edit time is message.edited; without one (embeds) it is ignored', () => {
    const base = { id: '10', channel_id: '20', author, content: 'new', timestamp: '2024-01-01T00:00:00.000000+00:00', type: 0 };
    const env = envelopeOf(norm(dispatch('MESSAGE_UPDATE', { ...base, edited_timestamp: '2024-01-01T00:01:00.000000+00:00' })));
    expect(env).toMatchObject({ event_type: 'message.edited', event_time: 1704067260, input: { text: 'new' } });
    expectIgnored(norm(dispatch('MESSAGE_UPDATE', { ...base, edited_timestamp: null })), /embed update/);
  });

  it('MESSAGE_DELETE, MESSAGE_REACTION_ADD and GUILD_MEMBER_REMOVE', () => {
    expect(envelopeOf(norm(dispatch('MESSAGE_DELETE', { id: '10', channel_id: '20', guild_id: '30' })))).toMatchObject({
      event_type: 'message.recalled',
      actor: { actor_type: 'system' },
      conversation_id: 'discord:channel:20',
      subject: { subject_id: '10' },
    });
    expect(
      envelopeOf(norm(dispatch('MESSAGE_REACTION_ADD', { user_id: '5', channel_id: '20', message_id: '10', guild_id: '30', emoji: { id: null, name: '🔥' } }))),
    ).toMatchObject({
      event_type: 'reaction.added',
      actor: { actor_id: '5' },
      subject: { subject_id: '10', data: { reactions: ['🔥'] } },
    });
    expect(envelopeOf(norm(dispatch('GUILD_MEMBER_REMOVE', { guild_id: '30', user: author })))).toMatchObject({
      event_type: 'member.left',
      conversation_id: 'discord:guild:30',
      actor: { actor_id: author.id, actor_name: 'Mason' },
    });
  });

  it('the same member leaving in two sessions gets two ids (the sequence number is part of the id)', () => {
    const a = envelopeOf(norm(dispatch('GUILD_MEMBER_REMOVE', { guild_id: '30', user: author }, 1)));
    const b = envelopeOf(norm(dispatch('GUILD_MEMBER_REMOVE', { guild_id: '30', user: author }, 2)));
    expect(a.event_id).not.toBe(b.event_id);
  });

  it('ignores dispatches it does not route', () => {
    expectIgnored(norm(dispatch('TYPING_START', { channel_id: '1', user_id: '2', timestamp: 1 })), /TYPING_START is not routed/);
  });
});

describe('discord interactions', () => {
  it('a slash command: command name, options, and a reply target without the token', () => {
    const env = envelopeOf(norm(fixture('interaction.slash_command.discord-docs.json')));
    expect(env.subject).toEqual({
      subject_type: 'command',
      subject_id: 'cardsearch',
      data: { command_id: '771825006014889984', command_type: 'slash', options: [{ type: 3, name: 'cardname', value: 'The Gitrog Monster' }] },
    });
    expect(env.delivery.reply_target).toEqual({ interaction_id: '786008729715212338', channel_id: '645027906669510667' });
    expect(JSON.stringify(env)).not.toContain('A_UNIQUE_TOKEN');
    expect(env.event_time).toBe(1607469484);
  });

  it('a message command carries the target message', () => {
    expect(envelopeOf(norm(fixture('interaction.message_command.discord-docs.json'))).subject?.data).toMatchObject({
      command_type: 'message',
      target_message: { id: '867793854505943041', content: 'some message' },
    });
  });

  it('an INTERACTION_CREATE dispatch normalizes like the HTTP body', () => {
    const body = fixture('interaction.slash_command.discord-docs.json');
    const viaGateway = envelopeOf(norm(dispatch('INTERACTION_CREATE', body)));
    expect(viaGateway).toEqual(envelopeOf(norm(body)));
  });

  it('PING is answered with PONG; autocomplete is not routed', () => {
    expect(norm({ id: '1', type: 1, token: 't', application_id: '2', version: 1 })).toEqual({ kind: 'challenge', platform: 'discord', response: { type: 1 } });
    expectIgnored(norm({ id: '1', type: 4, token: 't', user: author, data: { id: '3', name: 'x' } }), /autocomplete/);
  });

  it('a button press is a component interaction in a DM', () => {
    const env = envelopeOf(
      norm({
        id: '786008729715212338',
        type: 3,
        token: 't',
        application_id: '2',
        channel_id: '9',
        user: author,
        data: { custom_id: 'approve', component_type: 2 },
      }),
    );
    expect(env).toMatchObject({
      event_type: 'interaction.invoked',
      bot_id: 'discord:2',
      subject: { subject_type: 'component', subject_id: 'approve' },
      data: { interaction: 'component' },
    });
  });

  it('refuses an interaction without a user', () => {
    expect(refusal(() => norm({ id: '1', type: 2, token: 't', data: { id: '3', name: 'x' } })).details).toMatchObject({ path: ['member'] });
  });
});
