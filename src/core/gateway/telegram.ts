// Telegram Bot API `Update` objects (webhook bodies, or a getUpdates response holding one update).
import { isRecord } from '../json.js';
import { platformDelivery } from './delivery.js';
import { EMPTY_INPUT, compact, effectiveBotId, finishEvent, platformEventId, type EnvelopeDraft } from './envelope-draft.js';
import type { GatewayEventType } from './event-types.js';
import { invalidPayload, parsePayload, type PayloadPath } from './payload-parse.js';
import { CONTENT_KEYS, conversationOf, messageActor, messageReplyTarget, readTelegramMessage, telegramUserActor, threadOf } from './telegram-message.js';
import {
  TgCallbackQuerySchema,
  TgChatMemberUpdatedSchema,
  TgGetUpdatesSchema,
  TgInlineQuerySchema,
  TgJoinRequestSchema,
  TgMessageSchema,
  TgReactionUpdatedSchema,
  TgUpdateHeadSchema,
  type TgChatMember,
  type TgMessage,
} from './telegram-schemas.js';
import type { NormalizeOptions, NormalizeResult } from './types.js';

const ROUTED_KINDS = [
  'message',
  'edited_message',
  'channel_post',
  'edited_channel_post',
  'callback_query',
  'inline_query',
  'my_chat_member',
  'chat_member',
  'chat_join_request',
  'message_reaction',
] as const;
type RoutedKind = (typeof ROUTED_KINDS)[number];

// Service messages that are not routed; membership changes are handled on their own.
const SERVICE_KEYS = [
  'new_chat_title',
  'new_chat_photo',
  'delete_chat_photo',
  'group_chat_created',
  'supergroup_chat_created',
  'channel_chat_created',
  'message_auto_delete_timer_changed',
  'migrate_to_chat_id',
  'migrate_from_chat_id',
  'pinned_message',
  'forum_topic_created',
  'forum_topic_edited',
  'forum_topic_closed',
  'forum_topic_reopened',
  'general_forum_topic_hidden',
  'general_forum_topic_unhidden',
  'video_chat_scheduled',
  'video_chat_started',
  'video_chat_ended',
  'video_chat_participants_invited',
  'successful_payment',
  'users_shared',
  'chat_shared',
  'boost_added',
  'chat_background_set',
  'proximity_alert_triggered',
  'web_app_data',
  'connected_website',
];

/** Normalizes one Telegram update (or a getUpdates response that holds exactly one). */
export function normalizeTelegram(payload: unknown, opts: NormalizeOptions): NormalizeResult {
  if (isRecord(payload) && 'ok' in payload && 'result' in payload && !('update_id' in payload)) {
    const res = parsePayload('telegram', TgGetUpdatesSchema, payload);
    if (res.result.length !== 1) {
      throw invalidPayload(
        'telegram',
        ['result'],
        `a getUpdates response must hold exactly one update here, it holds ${res.result.length}`,
        'pass one Update object per event (one element of "result")',
      );
    }
    return normalizeUpdate(res.result[0], ['result', 0], payload, opts);
  }
  return normalizeUpdate(payload, [], payload, opts);
}

type Ctx = { updateId: number; kind: RoutedKind; base: PayloadPath; botId: string | null; opts: NormalizeOptions; raw: unknown };

function normalizeUpdate(update: unknown, base: PayloadPath, raw: unknown, opts: NormalizeOptions): NormalizeResult {
  const head = parsePayload('telegram', TgUpdateHeadSchema, update, base);
  const record = isRecord(update) ? update : {};
  const kind = ROUTED_KINDS.find((k) => k in record);
  if (kind === undefined) {
    const other = Object.keys(record).find((k) => k !== 'update_id');
    if (other === undefined) throw invalidPayload('telegram', base, 'the Update carries no update kind besides update_id');
    return ignored(`telegram update kind ${other} is not routed`);
  }
  const ctx: Ctx = { updateId: head.update_id, kind, base: [...base, kind], botId: effectiveBotId(opts, null), opts, raw };
  const value = record[kind];
  switch (kind) {
    case 'message':
    case 'channel_post':
    case 'edited_message':
    case 'edited_channel_post':
      return messageUpdate(ctx, parsePayload('telegram', TgMessageSchema, value, ctx.base));
    case 'callback_query':
      return callbackQuery(ctx, value);
    case 'inline_query':
      return inlineQuery(ctx, value);
    case 'my_chat_member':
    case 'chat_member':
      return memberUpdate(ctx, value);
    case 'chat_join_request':
      return joinRequest(ctx, value);
    case 'message_reaction':
      return reaction(ctx, value);
  }
}

function ignored(reason: string): NormalizeResult {
  return { kind: 'ignored', platform: 'telegram', reason };
}

function draftBase(
  ctx: Ctx,
  eventType: GatewayEventType,
  sourceEventType: string,
  identity: ReadonlyArray<string | number | undefined>,
): Pick<EnvelopeDraft, 'event_id' | 'event_type' | 'source_event_type' | 'bot_id'> {
  return {
    // update_id alone is unique per bot; the chat and message ids keep ids apart when update ids are reused (test data, bot resets).
    event_id: platformEventId('telegram', ctx.botId, [ctx.updateId, sourceEventType, ...identity]),
    event_type: eventType,
    source_event_type: sourceEventType,
    bot_id: ctx.botId,
  };
}

function messageUpdate(ctx: Ctx, msg: TgMessage): NormalizeResult {
  const edited = ctx.kind === 'edited_message' || ctx.kind === 'edited_channel_post';
  const messageIdentity = [msg.chat.id, msg.message_thread_id, msg.message_id, msg.edit_date];
  const common = {
    event_time: edited ? (msg.edit_date ?? msg.date) : msg.date,
    conversation_id: conversationOf(msg.chat),
    thread_id: threadOf(msg.chat, msg.message_thread_id),
    actor: messageActor(msg),
    delivery: platformDelivery('telegram', messageReplyTarget(msg)),
  };
  if (!edited) {
    const members = membershipChange(msg);
    if (members) {
      return finishEvent(
        'telegram',
        {
          ...draftBase(ctx, members.eventType, `${ctx.kind}.${members.key}`, messageIdentity),
          ...common,
          subject: { subject_type: 'group', subject_id: String(msg.chat.id), data: { members: members.ids } },
          input: EMPTY_INPUT,
          delivery: platformDelivery('telegram', compact({ chat_id: String(msg.chat.id), message_thread_id: msg.message_thread_id })),
          data: { chat_type: msg.chat.type, message_id: String(msg.message_id) },
        },
        ctx.raw,
        ctx.opts,
      );
    }
    if ('write_access_allowed' in msg) {
      // The user allowed the bot to write to them first: the bot has a new contact.
      return finishEvent(
        'telegram',
        {
          ...draftBase(ctx, 'friend.added', `${ctx.kind}.write_access_allowed`, messageIdentity),
          ...common,
          subject: { subject_type: 'friend', subject_id: msg.from ? String(msg.from.id) : null, data: {} },
          input: EMPTY_INPUT,
          delivery: platformDelivery('telegram', { chat_id: String(msg.chat.id) }),
          data: { chat_type: msg.chat.type, message_id: String(msg.message_id) },
        },
        ctx.raw,
        ctx.opts,
      );
    }
    const service = SERVICE_KEYS.find((k) => k in msg);
    if (service !== undefined) return ignored(`telegram service message ${service} is not routed`);
  }
  const kinds = CONTENT_KEYS.filter((k) => k in msg);
  if (kinds.length === 0) {
    return ignored(`telegram ${ctx.kind} ${msg.message_id} carries no content the gateway reads (keys: ${Object.keys(msg).join(', ')})`);
  }
  const input = readTelegramMessage(msg);
  return finishEvent(
    'telegram',
    {
      ...draftBase(ctx, edited ? 'message.edited' : 'message.received', ctx.kind, messageIdentity),
      ...common,
      subject: { subject_type: 'message', subject_id: String(msg.message_id), data: edited && msg.edit_date ? { edit_date: msg.edit_date } : {} },
      input: {
        contents: input.contents,
        attachments: input.attachments,
        message_chain: input.entities.length > 0 ? input.entities : null,
      },
      data: compact({
        chat_type: msg.chat.type,
        message_id: String(msg.message_id),
        content_kinds: kinds.filter((k) => k !== 'text' && k !== 'caption'),
        mentions: input.mentions,
        command: input.command ?? undefined,
        reply_to_message_id: msg.reply_to_message ? String(msg.reply_to_message.message_id) : undefined,
      }),
    },
    ctx.raw,
    ctx.opts,
  );
}

function membershipChange(msg: TgMessage): { eventType: GatewayEventType; key: string; ids: string[] } | null {
  if (msg.new_chat_members) return { eventType: 'group.member_joined', key: 'new_chat_members', ids: msg.new_chat_members.map((u) => String(u.id)) };
  if (msg.left_chat_member) return { eventType: 'member.left', key: 'left_chat_member', ids: [String(msg.left_chat_member.id)] };
  return null;
}

function callbackQuery(ctx: Ctx, value: unknown): NormalizeResult {
  const cq = parsePayload('telegram', TgCallbackQuerySchema, value, ctx.base);
  const chat = cq.message?.chat;
  return finishEvent(
    'telegram',
    {
      ...draftBase(ctx, 'interaction.invoked', 'callback_query', [cq.id]),
      event_time: null,
      conversation_id: chat ? conversationOf(chat) : null,
      thread_id: chat ? threadOf(chat, cq.message?.message_thread_id) : null,
      actor: telegramUserActor(cq.from),
      subject: { subject_type: 'callback_query', subject_id: cq.id, data: compact({ data: cq.data, game_short_name: cq.game_short_name }) },
      input: EMPTY_INPUT,
      delivery: platformDelivery(
        'telegram',
        compact({
          callback_query_id: cq.id,
          chat_id: chat ? String(chat.id) : undefined,
          message_id: cq.message ? String(cq.message.message_id) : undefined,
          inline_message_id: cq.inline_message_id,
        }),
      ),
      data: compact({ interaction: 'callback_query', chat_type: chat?.type, message_id: cq.message ? String(cq.message.message_id) : undefined }),
    },
    ctx.raw,
    ctx.opts,
  );
}

function inlineQuery(ctx: Ctx, value: unknown): NormalizeResult {
  const q = parsePayload('telegram', TgInlineQuerySchema, value, ctx.base);
  return finishEvent(
    'telegram',
    {
      ...draftBase(ctx, 'interaction.invoked', 'inline_query', [q.id]),
      event_time: null,
      conversation_id: null,
      thread_id: null,
      actor: telegramUserActor(q.from),
      subject: { subject_type: 'inline_query', subject_id: q.id, data: compact({ offset: q.offset, chat_type: q.chat_type }) },
      // The query is what the user typed after the bot's name.
      input: { contents: [], attachments: [], text: q.query === '' ? null : q.query },
      delivery: platformDelivery('telegram', { inline_query_id: q.id }),
      data: { interaction: 'inline_query' },
    },
    ctx.raw,
    ctx.opts,
  );
}

function isIn(member: TgChatMember): boolean {
  if (member.status === 'restricted') return member.is_member ?? true;
  return member.status !== 'left' && member.status !== 'kicked';
}

function memberUpdate(ctx: Ctx, value: unknown): NormalizeResult {
  const u = parsePayload('telegram', TgChatMemberUpdatedSchema, value, ctx.base);
  const was = isIn(u.old_chat_member);
  const now = isIn(u.new_chat_member);
  const own = ctx.kind === 'my_chat_member';
  if (was === now) {
    return ignored(
      `telegram ${ctx.kind}: status changed from ${u.old_chat_member.status} to ${u.new_chat_member.status} without joining or leaving; not routed`,
    );
  }
  const eventType: GatewayEventType = own ? (now ? 'bot.added' : 'bot.removed') : now ? 'group.member_joined' : 'member.left';
  return finishEvent(
    'telegram',
    {
      ...draftBase(ctx, eventType, ctx.kind, [u.chat.id, u.new_chat_member.user.id, u.date]),
      event_time: u.date,
      conversation_id: conversationOf(u.chat),
      thread_id: null,
      actor: telegramUserActor(u.from),
      subject: { subject_type: 'group', subject_id: String(u.chat.id), data: { members: [String(u.new_chat_member.user.id)] } },
      input: EMPTY_INPUT,
      delivery: platformDelivery('telegram', now ? { chat_id: String(u.chat.id) } : null),
      data: { chat_type: u.chat.type, old_status: u.old_chat_member.status, new_status: u.new_chat_member.status },
    },
    ctx.raw,
    ctx.opts,
  );
}

function joinRequest(ctx: Ctx, value: unknown): NormalizeResult {
  const r = parsePayload('telegram', TgJoinRequestSchema, value, ctx.base);
  return finishEvent(
    'telegram',
    {
      ...draftBase(ctx, 'group.request_received', 'chat_join_request', [r.chat.id, r.from.id, r.date]),
      event_time: r.date,
      conversation_id: conversationOf(r.chat),
      thread_id: null,
      actor: telegramUserActor(r.from),
      subject: { subject_type: 'request', subject_id: `${r.chat.id}:${r.from.id}`, data: {} },
      input: { contents: [], attachments: [], text: r.bio ?? null },
      delivery: platformDelivery(
        'telegram',
        compact({ chat_id: String(r.chat.id), user_chat_id: r.user_chat_id !== undefined ? String(r.user_chat_id) : undefined }),
      ),
      data: { chat_type: r.chat.type },
    },
    ctx.raw,
    ctx.opts,
  );
}

function reaction(ctx: Ctx, value: unknown): NormalizeResult {
  const r = parsePayload('telegram', TgReactionUpdatedSchema, value, ctx.base);
  const key = (x: { type: string; emoji?: string | undefined; custom_emoji_id?: string | undefined }): string => x.emoji ?? x.custom_emoji_id ?? x.type;
  const before = new Set(r.old_reaction.map(key));
  const added = r.new_reaction.map(key).filter((k) => !before.has(k));
  if (added.length === 0) return ignored('telegram message_reaction removed reactions only; only additions are routed');
  const actor = r.user
    ? telegramUserActor(r.user)
    : r.actor_chat
      ? { actor_type: 'channel', actor_id: String(r.actor_chat.id), actor_name: r.actor_chat.title ?? null, metadata: {} }
      : null;
  return finishEvent(
    'telegram',
    {
      ...draftBase(ctx, 'reaction.added', 'message_reaction', [r.chat.id, r.message_id, r.date]),
      event_time: r.date,
      conversation_id: conversationOf(r.chat),
      thread_id: null,
      actor,
      subject: { subject_type: 'message', subject_id: String(r.message_id), data: { reactions: added } },
      input: EMPTY_INPUT,
      delivery: platformDelivery('telegram', { chat_id: String(r.chat.id), message_id: String(r.message_id) }),
      data: { chat_type: r.chat.type, message_id: String(r.message_id) },
    },
    ctx.raw,
    ctx.opts,
  );
}
