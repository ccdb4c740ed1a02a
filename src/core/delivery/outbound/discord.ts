// Discord REST: channel messages (a reply by message_reference, deduplicated by nonce) and edits; replies to
// deferred interactions on the interaction webhook (the original response, then follow-ups).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { LbotError } from '../../errors.js';
import { commonOutcome, excerpt, platformError } from './answers.js';
import type { OutboundRequest, PlatformSender, SendInput } from './types.js';

const Snowflake = z.string().regex(/^\d{1,20}$/);
const TargetSchema = z.looseObject({ channel_id: Snowflake, message_id: Snowflake.optional() });
const AnswerSchema = z.looseObject({
  id: z.string().optional(),
  message: z.string().optional(),
  code: z.number().optional(),
  retry_after: z.number().optional(),
});

/** Discord nonces are at most 25 characters; the idempotency key is hashed into one. */
const nonceOf = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 25);

/** A deferred HTTP interaction: answered on its webhook (no bot token; the interaction token is in the path). */
const InteractionTargetSchema = z.looseObject({
  application_id: Snowflake,
  interaction_token: z.string().regex(/^[A-Za-z0-9._-]{1,500}$/),
  interaction_original: z.literal(true).optional(),
});

function interactionRequest(base: string, item: SendInput['item'], t: z.infer<typeof InteractionTargetSchema>): OutboundRequest {
  const hook = `${base}/webhooks/${t.application_id}/${t.interaction_token}`;
  const headers = { 'content-type': 'application/json' };
  const body = JSON.stringify({ content: item.text, allowed_mentions: { parse: [] } });
  if (item.op === 'edit') {
    if (!item.edits_message_id) throw new LbotError('invalid_argument', 'the message this edit changes was never delivered');
    return { method: 'PATCH', url: `${hook}/messages/${item.edits_message_id}`, headers, body };
  }
  // The first reply replaces the deferred "thinking" response (an edit: sending it twice is harmless).
  if (t.interaction_original) return { method: 'PATCH', url: `${hook}/messages/@original`, headers, body };
  return { method: 'POST', url: `${hook}?wait=true`, headers, body };
}

export const discordSender: PlatformSender = {
  request({ base, token, item }) {
    const it = InteractionTargetSchema.safeParse(item.target);
    if (it.success) return interactionRequest(base, item, it.data);
    const t = TargetSchema.safeParse(item.target);
    if (!t.success) throw new LbotError('invalid_argument', 'discord reply target has no channel_id');
    if (!token) throw new LbotError('config.invalid', `platform account ${item.account}: discord needs a token`);
    const headers = { 'content-type': 'application/json', authorization: `Bot ${token}` };
    const channel = `${base}/channels/${t.data.channel_id}/messages`;
    if (item.op === 'edit') {
      if (!item.edits_message_id) throw new LbotError('invalid_argument', 'the message this edit changes was never delivered');
      return { method: 'PATCH', url: `${channel}/${item.edits_message_id}`, headers, body: JSON.stringify({ content: item.text }) };
    }
    const body = {
      content: item.text,
      // enforce_nonce: a resend of the same row after a crash creates no second message.
      nonce: nonceOf(item.idempotency_key),
      enforce_nonce: true,
      allowed_mentions: { parse: [] },
      ...(t.data.message_id ? { message_reference: { message_id: t.data.message_id, fail_if_not_exists: false } } : {}),
    };
    return { method: 'POST', url: channel, headers, body: JSON.stringify(body) };
  },
  read(answer) {
    const a = AnswerSchema.safeParse(answer.json);
    if (answer.status >= 200 && answer.status < 300) return { kind: 'delivered', message_id: a.success ? (a.data.id ?? null) : null };
    const code = a.success && a.data.code !== undefined ? `discord_${a.data.code}` : `http_${answer.status}`;
    const message = a.success ? (a.data.message ?? '') : excerpt(answer.text);
    const common = commonOutcome(answer, code, message, a.success ? (a.data.retry_after ?? null) : null);
    return common ?? { kind: 'failed', error: platformError(code, message || `HTTP ${answer.status}`, answer) };
  },
};
