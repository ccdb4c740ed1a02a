// Lark / Feishu IM v1: reply to the message (in its thread) or send to the chat; edit a text message (PUT).
import { z } from 'zod';
import { LbotError } from '../../errors.js';
import { commonOutcome, excerpt, platformError } from './answers.js';
import type { PlatformAnswer, PlatformSender } from './types.js';

const TargetSchema = z.looseObject({
  chat_id: z.string().min(1).optional(),
  message_id: z.string().min(1).optional(),
  thread_id: z.string().nullable().optional(),
});
const AnswerSchema = z.looseObject({ code: z.number(), msg: z.string().optional(), data: z.looseObject({ message_id: z.string().optional() }).optional() });
/** Lark's "too many requests" and expired or invalid tenant token codes. */
const RATE_LIMITED = 99991400;
const TOKEN_INVALID = new Set([99991661, 99991663, 99991668]);

/** Lark's rate-limit reset header (seconds), else Retry-After. */
function resetAfter(answer: PlatformAnswer): number | null {
  const raw = answer.header('x-ogw-ratelimit-reset');
  const n = raw === null ? NaN : Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : null;
}

export const larkSender: PlatformSender = {
  request({ base, token, item }) {
    const t = TargetSchema.safeParse(item.target);
    if (!t.success || (!t.data.message_id && !t.data.chat_id)) throw new LbotError('invalid_argument', 'lark reply target has neither message_id nor chat_id');
    if (!token) throw new LbotError('config.invalid', `platform account ${item.account}: lark needs a tenant access token`);
    const headers = { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${token}` };
    const content = JSON.stringify({ text: item.text });
    // uuid: Lark drops a second request with the same uuid within an hour (a resend after a crash).
    const uuid = item.idempotency_key.slice(0, 50);
    const api = `${base}/open-apis/im/v1/messages`;
    if (item.op === 'edit') {
      if (!item.edits_message_id) throw new LbotError('invalid_argument', 'the message this edit changes was never delivered');
      return { method: 'PUT', url: `${api}/${encodeURIComponent(item.edits_message_id)}`, headers, body: JSON.stringify({ msg_type: 'text', content }) };
    }
    if (t.data.message_id) {
      return {
        method: 'POST',
        url: `${api}/${encodeURIComponent(t.data.message_id)}/reply`,
        headers,
        body: JSON.stringify({ msg_type: 'text', content, uuid, reply_in_thread: Boolean(t.data.thread_id) }),
      };
    }
    return {
      method: 'POST',
      url: `${api}?receive_id_type=chat_id`,
      headers,
      body: JSON.stringify({ receive_id: t.data.chat_id, msg_type: 'text', content, uuid }),
    };
  },
  read(answer) {
    const a = AnswerSchema.safeParse(answer.json);
    if (answer.status === 200 && a.success && a.data.code === 0) return { kind: 'delivered', message_id: a.data.data?.message_id ?? null };
    const code = a.success ? `lark_${a.data.code}` : `http_${answer.status}`;
    const message = a.success ? (a.data.msg ?? '') : excerpt(answer.text);
    if (a.success && TOKEN_INVALID.has(a.data.code)) return { kind: 'reauth', error: platformError(code, message, answer) };
    if (a.success && a.data.code === RATE_LIMITED) return { kind: 'retry', error: platformError(code, message, answer, resetAfter(answer)) };
    const common = commonOutcome(answer, code, message, resetAfter(answer));
    return common ?? { kind: 'failed', error: platformError(code, message || `HTTP ${answer.status}`, answer) };
  },
};

const TokenAnswerSchema = z.looseObject({
  code: z.number(),
  msg: z.string().optional(),
  tenant_access_token: z.string().min(1).optional(),
  expire: z.number().optional(),
});

/** The request that exchanges the app id and secret for a tenant access token. */
export function larkTokenRequest(base: string, appId: string, appSecret: string): { url: string; body: string } {
  return { url: `${base}/open-apis/auth/v3/tenant_access_token/internal`, body: JSON.stringify({ app_id: appId, app_secret: appSecret }) };
}

export function readLarkToken(answer: PlatformAnswer): { token: string; expire_s: number } | { error: string } {
  const a = TokenAnswerSchema.safeParse(answer.json);
  if (answer.status === 200 && a.success && a.data.code === 0 && a.data.tenant_access_token)
    return { token: a.data.tenant_access_token, expire_s: a.data.expire ?? 7200 };
  return { error: a.success ? `lark_${a.data.code}: ${a.data.msg ?? ''}` : `HTTP ${answer.status}: ${excerpt(answer.text)}` };
}
