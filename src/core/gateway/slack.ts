// Slack Events API request bodies: `event_callback` becomes an event, `url_verification` a challenge answer.
import { z } from 'zod';
import type { ArtifactRef, ContentElement } from '../protocol/event.js';
import { platformDelivery } from './delivery.js';
import {
  EMPTY_INPUT,
  compact,
  effectiveBotId,
  finishEvent,
  platformArtifact,
  platformEventId,
  systemActor,
  textContent,
  userActor,
  type EnvelopeDraft,
} from './envelope-draft.js';
import type { GatewayEventType } from './event-types.js';
import { invalidPayload, parsePayload } from './payload-parse.js';
import type { NormalizeOptions, NormalizeResult } from './types.js';

const HeadSchema = z.looseObject({ type: z.string().min(1) });
const ChallengeSchema = z.looseObject({ type: z.literal('url_verification'), challenge: z.string().min(1) });
const CallbackSchema = z.looseObject({
  type: z.literal('event_callback'),
  team_id: z.string().min(1),
  api_app_id: z.string().min(1).optional(),
  event_id: z.string().min(1).optional(),
  event_time: z.number().int().optional(),
  event: z.looseObject({ type: z.string().min(1), subtype: z.string().optional() }),
});
type Callback = z.infer<typeof CallbackSchema>;

const Ts = z.string().regex(/^\d+(\.\d+)?$/, 'expected a Slack timestamp such as "1355517523.000005"');
const FileSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().optional(),
  mimetype: z.string().optional(),
  size: z.number().optional(),
  url_private: z.string().optional(),
});
const MessageSchema = z.looseObject({
  channel: z.string().min(1),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  text: z.string().optional(),
  ts: Ts,
  thread_ts: Ts.optional(),
  channel_type: z.string().optional(),
  files: z.array(FileSchema).optional(),
});
type SlackMessage = z.infer<typeof MessageSchema>;
const ChangedSchema = z.looseObject({ channel: z.string().min(1), message: MessageSchema.omit({ channel: true }) });
const DeletedSchema = z.looseObject({
  channel: z.string().min(1),
  deleted_ts: Ts,
  previous_message: z.looseObject({ user: z.string().optional() }).optional(),
});
const ReactionSchema = z.looseObject({
  user: z.string().min(1),
  reaction: z.string().min(1),
  item: z.looseObject({ type: z.string().min(1), channel: z.string().optional(), ts: Ts.optional() }),
  item_user: z.string().optional(),
  event_ts: Ts,
});
const MemberSchema = z.looseObject({
  user: z.string().min(1),
  channel: z.string().min(1),
  inviter: z.string().optional(),
  channel_type: z.string().optional(),
});

// Message subtypes that are somebody saying something; the rest (joins, topic changes…) are not routed.
const SPOKEN_SUBTYPES = new Set(['file_share', 'thread_broadcast', 'me_message', 'bot_message']);

/** Normalizes one Slack Events API request body. */
export function normalizeSlack(payload: unknown, opts: NormalizeOptions): NormalizeResult {
  const head = parsePayload('slack', HeadSchema, payload);
  if (head.type === 'url_verification') {
    return { kind: 'challenge', platform: 'slack', response: { challenge: parsePayload('slack', ChallengeSchema, payload).challenge } };
  }
  if (head.type === 'app_rate_limited') return ignored('slack app_rate_limited is a rate-limit notice, not an event');
  if (head.type !== 'event_callback') {
    throw invalidPayload('slack', ['type'], `expected "event_callback" or "url_verification", got "${head.type}"`);
  }
  const cb = parsePayload('slack', CallbackSchema, payload);
  const ctx: Ctx = { cb, botId: effectiveBotId(opts, cb.api_app_id ? `slack:${cb.api_app_id}` : null), opts, raw: payload };
  const inner = cb.event;
  switch (inner.type) {
    case 'message':
      return messageEvent(ctx, inner.subtype);
    case 'app_mention':
      return spoken(ctx, parsePayload('slack', MessageSchema, inner, ['event']), 'app_mention', true);
    case 'reaction_added':
      return reactionAdded(ctx);
    case 'member_joined_channel':
    case 'member_left_channel':
      return memberEvent(ctx, inner.type);
    default:
      return ignored(`slack event ${inner.type} is not routed`);
  }
}

type Ctx = { cb: Callback; botId: string | null; opts: NormalizeOptions; raw: unknown };

function ignored(reason: string): NormalizeResult {
  return { kind: 'ignored', platform: 'slack', reason };
}

function slackSeconds(ts: string | undefined): number | null {
  return ts === undefined ? null : Math.floor(Number(ts));
}

function conversation(ctx: Ctx, channel: string): string {
  return `slack:${ctx.cb.team_id}:${channel}`;
}

function base(
  ctx: Ctx,
  eventType: GatewayEventType,
  sourceEventType: string,
  idParts: ReadonlyArray<string | undefined>,
  ts?: string,
): Pick<EnvelopeDraft, 'event_id' | 'event_type' | 'event_time' | 'source_event_type' | 'bot_id'> {
  const { cb } = ctx;
  // Slack repeats event_id on retries; the event's own identity is hashed too, for bodies that lack event_id.
  return {
    event_id: platformEventId('slack', ctx.botId, [cb.team_id, cb.event_id, sourceEventType, ...idParts]),
    event_type: eventType,
    event_time: cb.event_time ?? slackSeconds(ts),
    source_event_type: sourceEventType,
    bot_id: ctx.botId,
  };
}

function messageEvent(ctx: Ctx, subtype: string | undefined): NormalizeResult {
  const inner = ctx.cb.event;
  if (subtype === undefined || SPOKEN_SUBTYPES.has(subtype)) {
    return spoken(ctx, parsePayload('slack', MessageSchema, inner, ['event']), subtype ? `message.${subtype}` : 'message', false);
  }
  if (subtype === 'message_changed') {
    const ch = parsePayload('slack', ChangedSchema, inner, ['event']);
    return spoken(ctx, { ...ch.message, channel: ch.channel }, 'message.message_changed', false, 'message.edited');
  }
  if (subtype === 'message_deleted') {
    const del = parsePayload('slack', DeletedSchema, inner, ['event']);
    return finishEvent(
      'slack',
      {
        ...base(ctx, 'message.recalled', 'message.message_deleted', [del.channel, del.deleted_ts], del.deleted_ts),
        conversation_id: conversation(ctx, del.channel),
        thread_id: null,
        // Slack does not say who deleted the message; the previous author is kept as a hint only.
        actor: systemActor(),
        subject: { subject_type: 'message', subject_id: del.deleted_ts, data: compact({ author_id: del.previous_message?.user }) },
        input: EMPTY_INPUT,
        delivery: platformDelivery('slack', { channel: del.channel }),
        data: { channel: del.channel },
      },
      ctx.raw,
      ctx.opts,
    );
  }
  return ignored(`slack message subtype ${subtype} is not routed`);
}

function spoken(ctx: Ctx, msg: SlackMessage, sourceEventType: string, mentioned: boolean, eventType: GatewayEventType = 'message.received'): NormalizeResult {
  const contents: ContentElement[] = msg.text !== undefined && msg.text !== '' ? [textContent(msg.text)] : [];
  const attachments: ArtifactRef[] = (msg.files ?? []).map((f) =>
    platformArtifact('slack', {
      artifact_type: f.mimetype?.startsWith('image/') ? 'image' : 'file',
      id: f.id,
      url: f.url_private ?? null,
      name: f.name ?? null,
      mime_type: f.mimetype ?? null,
      size: f.size ?? null,
    }),
  );
  const actorId = msg.user ?? msg.bot_id;
  return finishEvent(
    'slack',
    {
      ...base(ctx, eventType, sourceEventType, [msg.channel, msg.ts], msg.ts),
      conversation_id: conversation(ctx, msg.channel),
      thread_id: msg.thread_ts ? `${conversation(ctx, msg.channel)}:thread:${msg.thread_ts}` : null,
      actor: actorId ? userActor(actorId, null, {}, msg.bot_id !== undefined ? 'bot' : 'user') : null,
      subject: { subject_type: 'message', subject_id: msg.ts, data: {} },
      input: { contents, attachments },
      delivery: platformDelivery('slack', compact({ channel: msg.channel, ts: msg.ts, thread_ts: msg.thread_ts })),
      data: compact({
        channel: msg.channel,
        channel_type: msg.channel_type,
        mentions: mentionsIn(msg.text ?? ''),
        mentioned: mentioned || undefined,
      }),
    },
    ctx.raw,
    ctx.opts,
  );
}

/** User ids mentioned as `<@U123>` or `<@U123|name>` in Slack message text. */
function mentionsIn(text: string): string[] {
  return [...text.matchAll(/<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g)].map((m) => m[1] ?? '');
}

function reactionAdded(ctx: Ctx): NormalizeResult {
  const r = parsePayload('slack', ReactionSchema, ctx.cb.event, ['event']);
  const channel = r.item.type === 'message' ? r.item.channel : undefined;
  return finishEvent(
    'slack',
    {
      ...base(ctx, 'reaction.added', 'reaction_added', [r.user, r.reaction, channel, r.item.ts, r.event_ts], r.event_ts),
      conversation_id: channel ? conversation(ctx, channel) : null,
      thread_id: null,
      actor: userActor(r.user, null),
      subject: { subject_type: r.item.type, subject_id: r.item.ts ?? null, data: compact({ reactions: [r.reaction], author_id: r.item_user }) },
      input: EMPTY_INPUT,
      delivery: platformDelivery('slack', channel ? compact({ channel, ts: r.item.ts }) : null),
      data: compact({ channel, reaction: r.reaction }),
    },
    ctx.raw,
    ctx.opts,
  );
}

function memberEvent(ctx: Ctx, type: 'member_joined_channel' | 'member_left_channel'): NormalizeResult {
  const m = parsePayload('slack', MemberSchema, ctx.cb.event, ['event']);
  const joined = type === 'member_joined_channel';
  return finishEvent(
    'slack',
    {
      ...base(ctx, joined ? 'group.member_joined' : 'member.left', type, [m.user, m.channel]),
      conversation_id: conversation(ctx, m.channel),
      thread_id: null,
      actor: userActor(m.inviter ?? m.user, null),
      subject: { subject_type: 'group', subject_id: m.channel, data: { members: [m.user] } },
      input: EMPTY_INPUT,
      delivery: platformDelivery('slack', joined ? { channel: m.channel } : null),
      data: compact({ channel: m.channel, channel_type: m.channel_type }),
    },
    ctx.raw,
    ctx.opts,
  );
}
