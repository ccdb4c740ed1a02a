// Lark/Feishu event subscription v2.0 bodies, and the url_verification handshake.
import { z } from 'zod';
import type { Actor } from '../protocol/event.js';
import { isRecord } from '../json.js';
import { platformDelivery } from './delivery.js';
import {
  EMPTY_INPUT,
  compact,
  effectiveBotId,
  finishEvent,
  platformEventId,
  secondsFromMs,
  systemActor,
  userActor,
  type EnvelopeDraft,
} from './envelope-draft.js';
import type { GatewayEventType } from './event-types.js';
import { readLarkContent } from './lark-content.js';
import { invalidPayload, parsePayload } from './payload-parse.js';
import type { NormalizeOptions, NormalizeResult } from './types.js';

const MsString = z.string().regex(/^\d+$/, 'expected epoch milliseconds as a digit string');
const UserIdSchema = z.looseObject({ open_id: z.string().min(1), user_id: z.string().optional(), union_id: z.string().optional() });
type UserId = z.infer<typeof UserIdSchema>;

const ChallengeSchema = z.looseObject({ type: z.literal('url_verification'), challenge: z.string().min(1) });
const V2Schema = z.looseObject({
  schema: z.literal('2.0'),
  header: z.looseObject({
    event_id: z.string().min(1),
    event_type: z.string().min(1),
    create_time: MsString,
    app_id: z.string().min(1),
    tenant_key: z.string().optional(),
  }),
  event: z.record(z.string(), z.unknown()),
});
type V2 = z.infer<typeof V2Schema>;

const ReceiveSchema = z.looseObject({
  sender: z.looseObject({ sender_id: UserIdSchema, sender_type: z.string().min(1) }),
  message: z.looseObject({
    message_id: z.string().min(1),
    root_id: z.string().optional(),
    parent_id: z.string().optional(),
    create_time: MsString,
    chat_id: z.string().min(1),
    thread_id: z.string().optional(),
    chat_type: z.string().min(1),
    message_type: z.string().min(1),
    content: z.string(),
    mentions: z.array(z.looseObject({ key: z.string(), id: UserIdSchema, name: z.string().optional() })).optional(),
  }),
});
const RecalledSchema = z.looseObject({
  message_id: z.string().min(1),
  chat_id: z.string().min(1),
  recall_time: MsString.optional(),
  recall_type: z.string().optional(),
});
const MemberUsersSchema = z.looseObject({
  chat_id: z.string().min(1),
  operator_id: UserIdSchema.optional(),
  users: z.array(z.looseObject({ name: z.string().optional(), user_id: UserIdSchema })).min(1),
});
const BotMemberSchema = z.looseObject({ chat_id: z.string().min(1), operator_id: UserIdSchema.optional(), name: z.string().optional() });
const ReactionSchema = z.looseObject({
  message_id: z.string().min(1),
  reaction_type: z.looseObject({ emoji_type: z.string().min(1) }),
  operator_type: z.string().optional(),
  user_id: UserIdSchema.optional(),
  action_time: MsString.optional(),
});

const MEMBER_EVENTS: Record<string, GatewayEventType> = {
  'im.chat.member.user.added_v1': 'group.member_joined',
  'im.chat.member.user.deleted_v1': 'member.left',
  'im.chat.member.user.withdrawn_v1': 'member.left',
};
const BOT_EVENTS: Record<string, GatewayEventType> = {
  'im.chat.member.bot.added_v1': 'bot.added',
  'im.chat.member.bot.deleted_v1': 'bot.removed',
};

/** Normalizes one Lark/Feishu event body (schema 2.0) or answers its url_verification. */
export function normalizeLark(payload: unknown, opts: NormalizeOptions): NormalizeResult {
  const p = isRecord(payload) ? payload : {};
  if (p.type === 'url_verification') {
    return { kind: 'challenge', platform: 'lark', response: { challenge: parsePayload('lark', ChallengeSchema, payload).challenge } };
  }
  if ('encrypt' in p) {
    throw invalidPayload(
      'lark',
      ['encrypt'],
      'the body is encrypted',
      "decrypt it with the app's Encrypt Key before normalizing, or turn encryption off for this endpoint",
    );
  }
  if (!('schema' in p) && 'uuid' in p) {
    throw invalidPayload(
      'lark',
      ['schema'],
      'is missing: this is an event of schema 1.0, which is not supported',
      'subscribe to events with schema 2.0 in the Lark developer console',
    );
  }
  const v2 = parsePayload('lark', V2Schema, payload);
  const ctx: Ctx = { v2, botId: effectiveBotId(opts, `lark:${v2.header.app_id}`), opts, raw: payload };
  const type = v2.header.event_type;
  if (type === 'im.message.receive_v1') return messageReceived(ctx);
  if (type === 'im.message.recalled_v1') return messageRecalled(ctx);
  if (type === 'im.message.reaction.created_v1') return reactionCreated(ctx);
  const member = MEMBER_EVENTS[type];
  if (member) return usersChanged(ctx, member);
  const bot = BOT_EVENTS[type];
  if (bot) return botChanged(ctx, bot);
  return { kind: 'ignored', platform: 'lark', reason: `lark event ${type} is not routed` };
}

type Ctx = { v2: V2; botId: string | null; opts: NormalizeOptions; raw: unknown };

function head(
  ctx: Ctx,
  eventType: GatewayEventType,
  eventTime: number | null,
): Pick<EnvelopeDraft, 'event_id' | 'event_type' | 'event_time' | 'source_event_type' | 'bot_id'> {
  const { header } = ctx.v2;
  return {
    event_id: platformEventId('lark', ctx.botId, [header.event_type, header.event_id]),
    event_type: eventType,
    event_time: eventTime ?? secondsFromMs(header.create_time),
    source_event_type: header.event_type,
    bot_id: ctx.botId,
  };
}

function larkActor(id: UserId, name: string | null = null, type: 'user' | 'bot' = 'user'): Actor {
  return userActor(id.open_id, name, compact({ user_id: id.user_id, union_id: id.union_id }), type);
}

function chat(chatId: string): string {
  return `lark:chat:${chatId}`;
}

function messageReceived(ctx: Ctx): NormalizeResult {
  const { sender, message: m } = parsePayload('lark', ReceiveSchema, ctx.v2.event, ['event']);
  if (m.message_type === 'system') return { kind: 'ignored', platform: 'lark', reason: 'lark system messages are not routed' };
  const input = readLarkContent(m.message_type, m.content, ['event', 'message', 'content']);
  return finishEvent(
    'lark',
    {
      ...head(ctx, 'message.received', secondsFromMs(m.create_time)),
      conversation_id: chat(m.chat_id),
      thread_id: m.thread_id ? `${chat(m.chat_id)}:thread:${m.thread_id}` : null,
      actor: larkActor(sender.sender_id, null, sender.sender_type === 'app' ? 'bot' : 'user'),
      subject: { subject_type: 'message', subject_id: m.message_id, data: {} },
      input,
      delivery: platformDelivery('lark', compact({ chat_id: m.chat_id, message_id: m.message_id, root_id: m.root_id, thread_id: m.thread_id })),
      data: compact({
        chat_type: m.chat_type,
        message_type: m.message_type,
        message_id: m.message_id,
        mentions: (m.mentions ?? []).map((x) => x.id.open_id),
        reply_to_message_id: m.parent_id,
      }),
    },
    ctx.raw,
    ctx.opts,
  );
}

function messageRecalled(ctx: Ctx): NormalizeResult {
  const r = parsePayload('lark', RecalledSchema, ctx.v2.event, ['event']);
  return finishEvent(
    'lark',
    {
      ...head(ctx, 'message.recalled', r.recall_time ? secondsFromMs(r.recall_time) : null),
      conversation_id: chat(r.chat_id),
      thread_id: null,
      // The payload says what kind of person recalled the message, not who.
      actor: systemActor(compact({ recall_type: r.recall_type })),
      subject: { subject_type: 'message', subject_id: r.message_id, data: {} },
      input: EMPTY_INPUT,
      delivery: platformDelivery('lark', { chat_id: r.chat_id }),
      data: compact({ message_id: r.message_id, recall_type: r.recall_type }),
    },
    ctx.raw,
    ctx.opts,
  );
}

function usersChanged(ctx: Ctx, eventType: GatewayEventType): NormalizeResult {
  const e = parsePayload('lark', MemberUsersSchema, ctx.v2.event, ['event']);
  const first = e.users[0];
  const actor = e.operator_id ? larkActor(e.operator_id) : first ? larkActor(first.user_id, first.name ?? null) : null;
  return finishEvent(
    'lark',
    {
      ...head(ctx, eventType, null),
      conversation_id: chat(e.chat_id),
      thread_id: null,
      actor,
      subject: { subject_type: 'group', subject_id: e.chat_id, data: { members: e.users.map((u) => u.user_id.open_id) } },
      input: EMPTY_INPUT,
      delivery: platformDelivery('lark', eventType === 'group.member_joined' ? { chat_id: e.chat_id } : null),
      data: { chat_id: e.chat_id },
    },
    ctx.raw,
    ctx.opts,
  );
}

function botChanged(ctx: Ctx, eventType: GatewayEventType): NormalizeResult {
  const e = parsePayload('lark', BotMemberSchema, ctx.v2.event, ['event']);
  return finishEvent(
    'lark',
    {
      ...head(ctx, eventType, null),
      conversation_id: chat(e.chat_id),
      thread_id: null,
      actor: e.operator_id ? larkActor(e.operator_id) : null,
      subject: { subject_type: 'group', subject_id: e.chat_id, data: compact({ name: e.name }) },
      input: EMPTY_INPUT,
      delivery: platformDelivery('lark', eventType === 'bot.added' ? { chat_id: e.chat_id } : null),
      data: { chat_id: e.chat_id },
    },
    ctx.raw,
    ctx.opts,
  );
}

function reactionCreated(ctx: Ctx): NormalizeResult {
  const r = parsePayload('lark', ReactionSchema, ctx.v2.event, ['event']);
  return finishEvent(
    'lark',
    {
      ...head(ctx, 'reaction.added', r.action_time ? secondsFromMs(r.action_time) : null),
      // The reaction event names the message but not its chat.
      conversation_id: null,
      thread_id: null,
      actor: r.user_id ? larkActor(r.user_id, null, r.operator_type === 'app' ? 'bot' : 'user') : null,
      subject: { subject_type: 'message', subject_id: r.message_id, data: { reactions: [r.reaction_type.emoji_type] } },
      input: EMPTY_INPUT,
      delivery: platformDelivery('lark', { message_id: r.message_id }),
      data: { message_id: r.message_id },
    },
    ctx.raw,
    ctx.opts,
  );
}
