// Discord: gateway payloads ({op, d, s, t}), bare dispatch `d` objects, and HTTP interaction bodies.
import type { ArtifactRef, ContentElement } from '../protocol/event.js';
import { isRecord } from '../json.js';
import { platformDelivery } from './delivery.js';
import {
  EMPTY_INPUT,
  compact,
  effectiveBotId,
  finishEvent,
  platformArtifact,
  platformEventId,
  secondsFromIso,
  systemActor,
  textContent,
  type EnvelopeDraft,
} from './envelope-draft.js';
import { channelConversation, discordActor, guildConversation } from './discord-common.js';
import { normalizeInteraction } from './discord-interaction.js';
import {
  DcGatewaySchema,
  DcMemberAddSchema,
  DcMemberRemoveSchema,
  DcMessageDeleteSchema,
  DcMessageSchema,
  DcReactionAddSchema,
  type DcMessage,
} from './discord-schemas.js';
import type { GatewayEventType } from './event-types.js';
import { invalidPayload, parsePayload, type PayloadPath } from './payload-parse.js';
import type { NormalizeOptions, NormalizeResult } from './types.js';

const OPCODES: Record<number, string> = { 1: 'heartbeat', 7: 'reconnect', 9: 'invalid session', 10: 'hello', 11: 'heartbeat ack' };
// DEFAULT and REPLY; other message types are system notices (joins, pins, boosts…) or command echoes.
const SPOKEN_TYPES = new Set([0, 19]);

/** Normalizes a Discord gateway payload, a bare MESSAGE_CREATE / GUILD_MEMBER_ADD `d`, or an interaction body. */
export function normalizeDiscord(payload: unknown, opts: NormalizeOptions): NormalizeResult {
  const p = isRecord(payload) ? payload : {};
  if ('op' in p) return gatewayPayload(payload, opts);
  if ('author' in p) return dispatch('MESSAGE_CREATE', payload, [], null, payload, opts);
  if ('token' in p && 'type' in p) return normalizeInteraction(payload, [], payload, opts);
  if ('joined_at' in p && 'user' in p) return dispatch('GUILD_MEMBER_ADD', payload, [], null, payload, opts);
  throw invalidPayload(
    'discord',
    [],
    'is not a Discord payload: expected a gateway payload (op, d), an interaction (id, type, token), ' +
      'a MESSAGE_CREATE d (author, channel_id…) or a GUILD_MEMBER_ADD d (guild_id, user, joined_at)',
  );
}

function gatewayPayload(payload: unknown, opts: NormalizeOptions): NormalizeResult {
  const g = parsePayload('discord', DcGatewaySchema, payload);
  if (g.op !== 0) {
    return {
      kind: 'ignored',
      platform: 'discord',
      reason: `discord gateway opcode ${g.op} (${OPCODES[g.op] ?? 'control'}) is connection housekeeping; not routed`,
    };
  }
  if (typeof g.t !== 'string') throw invalidPayload('discord', ['t'], 'is missing (a dispatch, op 0, names its event in t)');
  return dispatch(g.t, g.d, ['d'], g.s ?? null, payload, opts);
}

type Ctx = { t: string; base: PayloadPath; seq: number | null; raw: unknown; opts: NormalizeOptions; botId: string | null };

function dispatch(t: string, d: unknown, base: PayloadPath, seq: number | null, raw: unknown, opts: NormalizeOptions): NormalizeResult {
  const ctx: Ctx = { t, base, seq, raw, opts, botId: effectiveBotId(opts, null) };
  switch (t) {
    case 'MESSAGE_CREATE':
      return messageEvent(ctx, parsePayload('discord', DcMessageSchema, d, base), 'message.received');
    case 'MESSAGE_UPDATE': {
      const msg = parsePayload('discord', DcMessageSchema, d, base);
      // Updates without an edit time are Discord attaching link previews, not the author editing.
      if (!msg.edited_timestamp) return ignored(`discord MESSAGE_UPDATE ${msg.id} has no edited_timestamp (embed update); not routed`);
      return messageEvent(ctx, msg, 'message.edited');
    }
    case 'MESSAGE_DELETE':
      return messageDelete(ctx, d);
    case 'MESSAGE_REACTION_ADD':
      return reactionAdd(ctx, d);
    case 'GUILD_MEMBER_ADD':
    case 'GUILD_MEMBER_REMOVE':
      return memberChange(ctx, d);
    case 'INTERACTION_CREATE':
      return normalizeInteraction(d, base, raw, opts);
    default:
      return ignored(`discord dispatch ${t} is not routed`);
  }
}

function ignored(reason: string): NormalizeResult {
  return { kind: 'ignored', platform: 'discord', reason };
}

function head(
  ctx: Ctx,
  eventType: GatewayEventType,
  idParts: ReadonlyArray<string | number | null | undefined>,
): Pick<EnvelopeDraft, 'event_id' | 'event_type' | 'source_event_type' | 'bot_id' | 'thread_id'> {
  return {
    event_id: platformEventId('discord', ctx.botId, [ctx.t, ...idParts]),
    event_type: eventType,
    source_event_type: ctx.t,
    bot_id: ctx.botId,
    // Discord threads are channels of their own, so the channel id already names the thread.
    thread_id: null,
  };
}

function messageEvent(ctx: Ctx, msg: DcMessage, eventType: 'message.received' | 'message.edited'): NormalizeResult {
  if (!SPOKEN_TYPES.has(msg.type)) return ignored(`discord message ${msg.id} of type ${msg.type} is a system message; not routed`);
  const contents: ContentElement[] = msg.content === '' ? [] : [textContent(msg.content)];
  const attachments: ArtifactRef[] = [];
  for (const a of msg.attachments) {
    const image = a.content_type?.startsWith('image/') ?? false;
    attachments.push(
      platformArtifact('discord', {
        artifact_type: image ? 'image' : 'file',
        id: a.id,
        url: a.url ?? null,
        name: a.filename,
        mime_type: a.content_type ?? null,
        size: a.size ?? null,
      }),
    );
    if (image && a.url) contents.push({ type: 'image_url', image_url: { url: a.url } });
  }
  const edited = eventType === 'message.edited';
  return finishEvent(
    'discord',
    {
      ...head(ctx, eventType, [msg.id, edited ? msg.edited_timestamp : null]),
      event_time: secondsFromIso(edited && msg.edited_timestamp ? msg.edited_timestamp : msg.timestamp),
      conversation_id: channelConversation(msg.channel_id),
      actor: discordActor(msg.author, msg.member?.nick),
      subject: { subject_type: 'message', subject_id: msg.id, data: {} },
      input: { contents, attachments },
      delivery: platformDelivery('discord', compact({ channel_id: msg.channel_id, message_id: msg.id, guild_id: msg.guild_id })),
      data: compact({
        message_id: msg.id,
        channel_id: msg.channel_id,
        guild_id: msg.guild_id,
        mentions: msg.mentions.map((m) => m.id),
        reply_to_message_id: msg.message_reference?.message_id,
      }),
    },
    ctx.raw,
    ctx.opts,
  );
}

function messageDelete(ctx: Ctx, d: unknown): NormalizeResult {
  const del = parsePayload('discord', DcMessageDeleteSchema, d, ctx.base);
  return finishEvent(
    'discord',
    {
      ...head(ctx, 'message.recalled', [del.id]),
      event_time: null,
      conversation_id: channelConversation(del.channel_id),
      // MESSAGE_DELETE does not say who deleted the message.
      actor: systemActor(),
      subject: { subject_type: 'message', subject_id: del.id, data: {} },
      input: EMPTY_INPUT,
      delivery: platformDelivery('discord', { channel_id: del.channel_id }),
      data: compact({ message_id: del.id, channel_id: del.channel_id, guild_id: del.guild_id }),
    },
    ctx.raw,
    ctx.opts,
  );
}

function reactionAdd(ctx: Ctx, d: unknown): NormalizeResult {
  const r = parsePayload('discord', DcReactionAddSchema, d, ctx.base);
  const emoji = r.emoji.name ?? r.emoji.id ?? 'unknown';
  const user = r.member?.user;
  return finishEvent(
    'discord',
    {
      ...head(ctx, 'reaction.added', [r.message_id, r.user_id, r.emoji.id ?? r.emoji.name]),
      event_time: null,
      conversation_id: channelConversation(r.channel_id),
      actor: user ? discordActor(user, r.member?.nick) : { actor_type: 'user', actor_id: r.user_id, actor_name: null, metadata: {} },
      subject: { subject_type: 'message', subject_id: r.message_id, data: compact({ reactions: [emoji], author_id: r.message_author_id }) },
      input: EMPTY_INPUT,
      delivery: platformDelivery('discord', { channel_id: r.channel_id, message_id: r.message_id }),
      data: compact({ message_id: r.message_id, channel_id: r.channel_id, guild_id: r.guild_id }),
    },
    ctx.raw,
    ctx.opts,
  );
}

function memberChange(ctx: Ctx, d: unknown): NormalizeResult {
  const joined = ctx.t === 'GUILD_MEMBER_ADD';
  const m = joined ? parsePayload('discord', DcMemberAddSchema, d, ctx.base) : parsePayload('discord', DcMemberRemoveSchema, d, ctx.base);
  const joinedAt = 'joined_at' in m && typeof m.joined_at === 'string' ? m.joined_at : null;
  const nick = 'nick' in m && typeof m.nick === 'string' ? m.nick : null;
  return finishEvent(
    'discord',
    {
      // A member can leave and rejoin: the join time, or the gateway sequence for leaves, keeps the ids apart.
      ...head(ctx, joined ? 'group.member_joined' : 'member.left', [m.guild_id, m.user.id, joinedAt ?? ctx.seq]),
      event_time: joinedAt ? secondsFromIso(joinedAt) : null,
      conversation_id: guildConversation(m.guild_id),
      actor: discordActor(m.user, nick),
      subject: { subject_type: 'group', subject_id: m.guild_id, data: { members: [m.user.id] } },
      input: EMPTY_INPUT,
      delivery: platformDelivery('discord', null),
      data: { guild_id: m.guild_id },
    },
    ctx.raw,
    ctx.opts,
  );
}
