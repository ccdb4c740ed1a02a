// Telegram Bot API: sendMessage (a reply, in its forum topic), editMessageText, answerCallbackQuery.
import { z } from 'zod';
import { LbotError } from '../../errors.js';
import { commonOutcome, excerpt, platformError } from './answers.js';
import type { PlatformSender } from './types.js';

/** Reply targets keep platform ids as text; the Bot API wants integers for message ids. */
const IntId = z.union([
  z.number().int(),
  z
    .string()
    .regex(/^-?\d{1,19}$/)
    .transform(Number),
]);
const TargetSchema = z.looseObject({ chat_id: IntId, message_id: IntId.optional(), message_thread_id: IntId.nullable().optional() });
/** The answer to a button press (recorded when its run starts): stops the button's progress indicator. */
const CallbackAnswerSchema = z.looseObject({ callback_query_id: z.string().min(1), answer_callback_query: z.literal(true) });
const AnswerSchema = z.looseObject({
  ok: z.boolean(),
  result: z.looseObject({ message_id: z.number() }).or(z.boolean()).optional(),
  error_code: z.number().optional(),
  description: z.string().optional(),
  parameters: z.looseObject({ retry_after: z.number().optional(), migrate_to_chat_id: z.number().optional() }).optional(),
});

export const telegramSender: PlatformSender = {
  request({ base, token, item }) {
    const answer = CallbackAnswerSchema.safeParse(item.target);
    if (answer.success) {
      if (!token) throw new LbotError('config.invalid', `platform account ${item.account}: telegram needs a token`);
      return {
        method: 'POST',
        url: `${base}/bot${token}/answerCallbackQuery`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ callback_query_id: answer.data.callback_query_id }),
      };
    }
    const t = TargetSchema.safeParse(item.target);
    if (!t.success) throw new LbotError('invalid_argument', 'telegram reply target has no chat_id');
    if (!token) throw new LbotError('config.invalid', `platform account ${item.account}: telegram needs a token`);
    const json = { 'content-type': 'application/json' };
    if (item.op === 'edit') {
      if (!item.edits_message_id) throw new LbotError('invalid_argument', 'the message this edit changes was never delivered');
      return {
        method: 'POST',
        url: `${base}/bot${token}/editMessageText`,
        headers: json,
        body: JSON.stringify({ chat_id: t.data.chat_id, message_id: Number(item.edits_message_id), text: item.text }),
      };
    }
    const body = {
      chat_id: t.data.chat_id,
      text: item.text,
      ...(t.data.message_thread_id ? { message_thread_id: t.data.message_thread_id } : {}),
      // A reply to the message that caused it; still sent when that message was deleted meanwhile.
      ...(t.data.message_id !== undefined ? { reply_parameters: { message_id: t.data.message_id, allow_sending_without_reply: true } } : {}),
    };
    return { method: 'POST', url: `${base}/bot${token}/sendMessage`, headers: json, body: JSON.stringify(body) };
  },
  read(answer) {
    const a = AnswerSchema.safeParse(answer.json);
    if (a.success && a.data.ok) {
      const r = a.data.result;
      return { kind: 'delivered', message_id: typeof r === 'object' ? String(r.message_id) : null };
    }
    const code = a.success ? `telegram_${a.data.error_code ?? answer.status}` : `http_${answer.status}`;
    const message = a.success ? (a.data.description ?? '') : excerpt(answer.text);
    const retryAfter = a.success ? (a.data.parameters?.retry_after ?? null) : null;
    // Telegram sends 429 with parameters.retry_after in the body.
    const common = commonOutcome(answer, code, message, retryAfter);
    if (common) return common;
    if (a.success && a.data.error_code === 400 && /message is not modified/i.test(message)) return { kind: 'delivered', message_id: null };
    return { kind: 'failed', error: platformError(code, message || `HTTP ${answer.status}`, answer) };
  },
};
