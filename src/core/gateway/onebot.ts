// OneBot v11 (QQ) events: message, notice and request posts; meta events are not routed.
import { z } from 'zod';
import type { Actor } from '../protocol/event.js';
import { platformDelivery } from './delivery.js';
import { EMPTY_INPUT, compact, effectiveBotId, finishEvent, platformArtifact, platformEventId, userActor, type EnvelopeDraft } from './envelope-draft.js';
import type { GatewayEventType } from './event-types.js';
import { OneBotIdSchema, OneBotMessageSchema, readOneBotMessage } from './onebot-message.js';
import { invalidPayload, parsePayload } from './payload-parse.js';
import type { NormalizeOptions, NormalizeResult } from './types.js';

const Id = OneBotIdSchema;
const BaseSchema = z.looseObject({
  time: z.number(),
  self_id: Id,
  post_type: z.enum(['message', 'message_sent', 'notice', 'request', 'meta_event']),
});
type Base = z.infer<typeof BaseSchema>;

const SenderSchema = z.looseObject({
  nickname: z.string().optional(),
  card: z.string().optional(),
  role: z.string().optional(),
});
const MessageSchema = z.looseObject({
  message_type: z.enum(['private', 'group']),
  sub_type: z.string().optional(),
  message_id: Id,
  user_id: Id,
  group_id: Id.optional(),
  message: OneBotMessageSchema,
  sender: SenderSchema.optional(),
  anonymous: z.looseObject({ id: Id, name: z.string() }).nullable().optional(),
});
const GroupSchema = z.looseObject({ group_id: Id });
const NoticeSchema = z.looseObject({ notice_type: z.string().min(1), sub_type: z.string().optional() });
const MemberChangeSchema = z.looseObject({ group_id: Id, user_id: Id, operator_id: Id.optional() });
const RecallSchema = z.looseObject({ user_id: Id, message_id: Id, group_id: Id.optional(), operator_id: Id.optional() });
const UploadSchema = z.looseObject({
  group_id: Id,
  user_id: Id,
  file: z.looseObject({ id: z.string().min(1), name: z.string(), size: z.number().optional() }),
});
const FriendAddSchema = z.looseObject({ user_id: Id });
const RequestSchema = z.looseObject({
  request_type: z.enum(['friend', 'group']),
  sub_type: z.string().optional(),
  user_id: Id,
  group_id: Id.optional(),
  comment: z.string().default(''),
  flag: z.string().min(1),
});

/** Normalizes one OneBot v11 event post. */
export function normalizeOneBot(payload: unknown, opts: NormalizeOptions): NormalizeResult {
  const base = parsePayload('onebot', BaseSchema, payload);
  const ctx = { base, botId: effectiveBotId(opts, `onebot:${base.self_id}`), opts, payload };
  switch (base.post_type) {
    case 'message':
      return messageEvent(ctx);
    case 'notice':
      return noticeEvent(ctx);
    case 'request':
      return requestEvent(ctx);
    case 'message_sent':
      return { kind: 'ignored', platform: 'onebot', reason: "onebot message_sent is the bot's own outgoing message; not routed" };
    case 'meta_event':
      return { kind: 'ignored', platform: 'onebot', reason: 'onebot meta_event (lifecycle/heartbeat) is connection housekeeping; not routed' };
  }
}

type Ctx = { base: Base; botId: string | null; opts: NormalizeOptions; payload: unknown };

function messageEvent({ base, botId, opts, payload }: Ctx): NormalizeResult {
  const msg = parsePayload('onebot', MessageSchema, payload);
  const isGroup = msg.message_type === 'group';
  const groupId = isGroup ? parsePayload('onebot', GroupSchema, payload).group_id : undefined;
  const input = readOneBotMessage(msg.message, ['message']);
  const anon = msg.anonymous ?? null;
  const actor = anon
    ? userActor(anon.id, anon.name, { anonymous: true })
    : userActor(
        msg.user_id,
        msg.sender?.card || msg.sender?.nickname || null,
        compact({
          nickname: msg.sender?.nickname,
          card: msg.sender?.card || undefined,
          role: msg.sender?.role,
        }),
      );
  return finishEvent(
    'onebot',
    {
      event_id: platformEventId('onebot', botId, ['message', msg.message_type, msg.message_id, msg.user_id, base.time]),
      event_type: 'message.received',
      event_time: base.time,
      source_event_type: `message.${msg.message_type}`,
      bot_id: botId,
      conversation_id: isGroup ? `onebot:group:${groupId}` : `onebot:private:${msg.user_id}`,
      thread_id: null,
      actor,
      subject: { subject_type: 'message', subject_id: String(msg.message_id), data: {} },
      input: { contents: input.contents, attachments: input.attachments, message_chain: input.message_chain },
      delivery: platformDelivery(
        'onebot',
        compact({
          message_type: msg.message_type,
          group_id: groupId !== undefined ? String(groupId) : undefined,
          user_id: isGroup ? undefined : String(msg.user_id),
          message_id: String(msg.message_id),
        }),
      ),
      data: compact({ message_type: msg.message_type, sub_type: msg.sub_type, message_id: String(msg.message_id), mentions: input.mentions }),
    },
    payload,
    opts,
  );
}

function noticeEvent(ctx: Ctx): NormalizeResult {
  const { payload } = ctx;
  const notice = parsePayload('onebot', NoticeSchema, payload);
  const kind = notice.notice_type;
  if (kind === 'group_increase' || kind === 'group_decrease') {
    const m = parsePayload('onebot', MemberChangeSchema, payload);
    const botJoined = String(m.user_id) === String(ctx.base.self_id);
    const eventType: GatewayEventType =
      kind === 'group_increase'
        ? botJoined
          ? 'bot.added'
          : 'group.member_joined'
        : notice.sub_type === 'kick_me' || botJoined
          ? 'bot.removed'
          : 'member.left';
    // The actor is who caused the change: the inviter or kicker, else the member who joined or left.
    const byOperator = ['invite', 'kick', 'kick_me'].includes(notice.sub_type ?? '') && m.operator_id !== undefined && String(m.operator_id) !== '0';
    const operator = byOperator && m.operator_id !== undefined ? m.operator_id : m.user_id;
    return groupNotice(
      ctx,
      notice,
      eventType,
      userActor(operator, null),
      {
        subject_type: 'group',
        subject_id: String(m.group_id),
        data: { members: [String(m.user_id)] },
      },
      String(m.group_id),
      [m.user_id, m.operator_id],
    );
  }
  if (kind === 'group_recall' || kind === 'friend_recall') {
    const r = parsePayload('onebot', RecallSchema, payload);
    const isGroup = kind === 'group_recall';
    if (isGroup && r.group_id === undefined) throw invalidPayload('onebot', ['group_id'], 'is missing (group_recall needs group_id)');
    const operator = r.operator_id ?? r.user_id;
    return finishEvent(
      'onebot',
      {
        ...noticeBase(ctx, notice, 'message.recalled', [r.message_id, r.user_id, operator]),
        conversation_id: isGroup ? `onebot:group:${r.group_id}` : `onebot:private:${r.user_id}`,
        actor: userActor(operator, null),
        subject: { subject_type: 'message', subject_id: String(r.message_id), data: { author_id: String(r.user_id) } },
        delivery: platformDelivery(
          'onebot',
          isGroup ? { message_type: 'group', group_id: String(r.group_id) } : { message_type: 'private', user_id: String(r.user_id) },
        ),
        data: { notice_type: kind, message_id: String(r.message_id) },
      },
      payload,
      ctx.opts,
    );
  }
  if (kind === 'group_upload') {
    const u = parsePayload('onebot', UploadSchema, payload);
    const file = platformArtifact('onebot', { artifact_type: 'file', id: u.file.id, name: u.file.name, size: u.file.size ?? null });
    return groupNotice(
      ctx,
      notice,
      'message.received',
      userActor(u.user_id, null),
      {
        subject_type: 'file',
        subject_id: u.file.id,
        data: {},
      },
      String(u.group_id),
      [u.file.id, u.user_id],
      { contents: [], attachments: [file] },
    );
  }
  if (kind === 'friend_add') {
    const f = parsePayload('onebot', FriendAddSchema, payload);
    return finishEvent(
      'onebot',
      {
        ...noticeBase(ctx, notice, 'friend.added', [f.user_id]),
        conversation_id: `onebot:private:${f.user_id}`,
        actor: userActor(f.user_id, null),
        subject: { subject_type: 'friend', subject_id: String(f.user_id), data: {} },
        delivery: platformDelivery('onebot', { message_type: 'private', user_id: String(f.user_id) }),
        data: { notice_type: kind },
      },
      payload,
      ctx.opts,
    );
  }
  return { kind: 'ignored', platform: 'onebot', reason: `onebot notice ${kind} is not routed` };
}

function noticeBase(
  { base, botId }: Ctx,
  notice: { notice_type: string; sub_type?: string | undefined },
  eventType: GatewayEventType,
  idParts: ReadonlyArray<string | number | undefined>,
): Omit<EnvelopeDraft, 'conversation_id' | 'actor' | 'subject' | 'delivery' | 'data'> {
  return {
    event_id: platformEventId('onebot', botId, ['notice', notice.notice_type, notice.sub_type, base.time, ...idParts]),
    event_type: eventType,
    event_time: base.time,
    source_event_type: `notice.${notice.notice_type}`,
    bot_id: botId,
    thread_id: null,
    input: EMPTY_INPUT,
  };
}

function groupNotice(
  ctx: Ctx,
  notice: { notice_type: string; sub_type?: string | undefined },
  eventType: GatewayEventType,
  actor: Actor,
  subject: NonNullable<EnvelopeDraft['subject']>,
  groupId: string,
  idParts: ReadonlyArray<string | number | undefined>,
  input = EMPTY_INPUT,
): NormalizeResult {
  return finishEvent(
    'onebot',
    {
      ...noticeBase(ctx, notice, eventType, [groupId, ...idParts]),
      conversation_id: `onebot:group:${groupId}`,
      actor,
      subject,
      input,
      delivery: platformDelivery('onebot', { message_type: 'group', group_id: groupId }),
      data: compact({ notice_type: notice.notice_type, sub_type: notice.sub_type, group_id: groupId }),
    },
    ctx.payload,
    ctx.opts,
  );
}

function requestEvent({ base, botId, opts, payload }: Ctx): NormalizeResult {
  const req = parsePayload('onebot', RequestSchema, payload);
  const isGroup = req.request_type === 'group';
  if (isGroup && req.group_id === undefined) throw invalidPayload('onebot', ['group_id'], 'is missing (a group request needs group_id)');
  return finishEvent(
    'onebot',
    {
      event_id: platformEventId('onebot', botId, ['request', req.request_type, req.flag]),
      event_type: isGroup ? 'group.request_received' : 'friend.request_received',
      event_time: base.time,
      source_event_type: `request.${req.request_type}`,
      bot_id: botId,
      conversation_id: isGroup ? `onebot:group:${req.group_id}` : `onebot:private:${req.user_id}`,
      thread_id: null,
      actor: userActor(req.user_id, null),
      subject: { subject_type: 'request', subject_id: req.flag, data: compact({ request_type: req.request_type, sub_type: req.sub_type }) },
      // The verification message is what the requester typed; it is the input, never a chat message.
      input: { contents: [], attachments: [], text: req.comment === '' ? null : req.comment },
      delivery: platformDelivery('onebot', null),
      data: compact({ request_type: req.request_type, sub_type: req.sub_type, flag: req.flag, group_id: isGroup ? String(req.group_id) : undefined }),
    },
    payload,
    opts,
  );
}
