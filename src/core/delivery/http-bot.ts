// lbot's generic HTTP bot, on the LangBot HTTP-bot contract (docs/http-bot.md): signed messages in at
// POST /bots/{bot}, signed replies out to the account's callback URL. Signing, the inbound body and the
// envelope it becomes; the routes live in runtime/server/http-bot-routes.ts.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { EventEnvelope, JsonObject } from '../protocol/event.js';
import { EventEnvelopeSchema } from '../protocol/event.js';
import { accountBotId, type PlatformAccount } from './accounts.js';

export const TIMESTAMP_HEADER = 'x-langbot-timestamp';
export const SIGNATURE_HEADER = 'x-langbot-signature';
export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** A signed request is accepted this many seconds either side of the receiver's clock. */
export const SIGNATURE_WINDOW_S = 300;
/** How long an idempotency key is remembered (a retry after that is a new message). */
export const IDEMPOTENCY_TTL_S = 24 * 3600;

/** `sha256=<hex>` of HMAC-SHA256(secret, "{timestamp}.{body}"). */
export function signBody(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')}`;
}

export type SignatureCheck = { secret: string; timestamp: string | undefined; signature: string | undefined; rawBody: string; nowS: number };

/** Null when the request is signed by `secret` within the window; else why not (never the expected value). */
export function signatureProblem(c: SignatureCheck): string | null {
  if (!c.timestamp) return `missing ${TIMESTAMP_HEADER} header`;
  if (!c.signature) return `missing ${SIGNATURE_HEADER} header`;
  if (!/^\d{1,12}$/.test(c.timestamp)) return `${TIMESTAMP_HEADER} is not epoch seconds`;
  if (Math.abs(c.nowS - Number(c.timestamp)) > SIGNATURE_WINDOW_S) return `${TIMESTAMP_HEADER} is outside the ${SIGNATURE_WINDOW_S} s window`;
  // Accepted as `sha256=<hex>` or bare hex, compared in constant time.
  const given = c.signature
    .trim()
    .replace(/^sha256=/i, '')
    .toLowerCase();
  const expected = signBody(c.secret, c.timestamp, c.rawBody).slice('sha256='.length);
  if (!/^[0-9a-f]{64}$/.test(given)) return 'the signature is not a hex HMAC-SHA256';
  return timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(expected, 'hex')) ? null : 'the signature does not match';
}

const Id = z.string().min(1).max(256);

/** What a client POSTs to /bots/{bot} and /bots/{bot}/sync. Unknown fields are kept in `data.extra`. */
export const HttpBotMessageSchema = z.looseObject({
  /** The caller's conversation key (a ticket number, a user id): one lbot conversation per session. */
  session_id: Id,
  /** The message text, or LangBot message-chain segments whose `text` parts are joined. */
  message: z.union([z.string().max(100_000), z.array(z.looseObject({ type: z.string(), text: z.string().optional() })).max(1000)]),
  message_id: Id.optional(),
  session_type: z.enum(['person', 'group']).default('person'),
  user_id: Id.optional(),
  user_name: z.string().max(256).optional(),
});
export type HttpBotMessage = z.infer<typeof HttpBotMessageSchema>;

export const HttpBotResetSchema = z.looseObject({ session_id: Id });

export const messageTextOf = (m: HttpBotMessage['message']): string =>
  typeof m === 'string' ? m : m.map((s) => (typeof s.text === 'string' ? s.text : '')).join('');

/**
 * The conversation a session maps to; a reset (`/bots/{bot}/reset`) moves the session to a new
 * generation, so runners see a fresh conversation (history and conversation state start empty).
 */
export function sessionConversationId(account: string, sessionId: string, generation: number): string {
  return generation === 0 ? `http:${account}:${sessionId}` : `http:${account}:${sessionId}#${generation}`;
}

export type HttpBotEnvelopeInput = {
  account: PlatformAccount;
  message: HttpBotMessage;
  /** The idempotency key, or null when the caller sent none. */
  key: string | null;
  generation: number;
  nowS: number;
  /** /sync answers in the response, so the event has nothing to reply to on the callback. */
  sync: boolean;
  /** A fallback event id for requests without an idempotency key. */
  uniqueId: string;
};

/** The event envelope of one inbound HTTP-bot message. */
export function httpBotEnvelope(i: HttpBotEnvelopeInput): EventEnvelope {
  const { account, message } = i;
  const text = messageTextOf(message.message);
  const conversation_id = sessionConversationId(account.name, message.session_id, i.generation);
  const replyTarget: JsonObject = { session_id: message.session_id, ...(message.message_id ? { message_id: message.message_id } : {}) };
  const { session_id, message: _m, message_id, session_type, user_id, user_name, ...extra } = message;
  return EventEnvelopeSchema.parse({
    event_id: `http:${account.name}:${i.key ?? i.uniqueId}`,
    event_type: 'message.received',
    event_time: i.nowS,
    source: 'platform',
    source_event_type: 'http_bot.message',
    bot_id: accountBotId(account),
    conversation_id,
    thread_id: null,
    actor: { actor_type: 'user', actor_id: user_id ?? session_id, actor_name: user_name ?? null, metadata: {} },
    subject: null,
    input: { text, contents: text === '' ? [] : [{ type: 'text', text }], attachments: [], message_chain: null },
    delivery: {
      surface: 'platform',
      reply_target: i.sync ? null : replyTarget,
      supports_streaming: false,
      supports_edit: false,
      supports_reaction: false,
      max_message_size: null,
      platform_capabilities: { platform: 'http', streaming_mode: 'none' },
    },
    data: {
      session_id,
      session_type,
      ...(message_id ? { message_id } : {}),
      ...(i.generation > 0 ? { session_generation: i.generation } : {}),
      ...(Object.keys(extra).length > 0 ? { extra } : {}),
    },
    raw_ref: { artifact_id: null, storage_key: null },
  });
}
