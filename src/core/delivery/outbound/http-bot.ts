// The HTTP bot's replies: one signed POST per message to the account's callback URL (docs/http-bot.md).
import { z } from 'zod';
import { LbotError } from '../../errors.js';
import { IDEMPOTENCY_HEADER, SIGNATURE_HEADER, signBody, TIMESTAMP_HEADER } from '../http-bot.js';
import { commonOutcome, excerpt, platformError } from './answers.js';
import type { PlatformSender } from './types.js';

const TargetSchema = z.looseObject({ session_id: z.string().min(1), message_id: z.string().optional() });
const AnswerSchema = z.looseObject({ message_id: z.union([z.string(), z.number()]).optional() });

export const httpBotSender: PlatformSender = {
  request({ base, token, item, nowS }) {
    const t = TargetSchema.safeParse(item.target);
    if (!t.success) throw new LbotError('invalid_argument', 'http bot reply target has no session_id');
    if (!token) throw new LbotError('config.invalid', `platform account ${item.account}: the http bot needs a signing secret`);
    if (item.op === 'edit') throw new LbotError('invalid_argument', 'the http bot does not edit sent messages');
    const body = JSON.stringify({
      type: 'message',
      bot: item.account,
      session_id: t.data.session_id,
      reply_to: t.data.message_id ?? null,
      // Stable per message across retries: the receiver drops a copy it already took.
      message_id: item.idempotency_key,
      run_id: item.run_id,
      message: item.text,
    });
    const timestamp = String(Math.floor(nowS));
    return {
      method: 'POST',
      url: base,
      headers: {
        'content-type': 'application/json',
        [TIMESTAMP_HEADER]: timestamp,
        [SIGNATURE_HEADER]: signBody(token, timestamp, body),
        [IDEMPOTENCY_HEADER]: item.idempotency_key,
      },
      body,
    };
  },
  read(answer) {
    if (answer.status >= 200 && answer.status < 300) {
      const a = AnswerSchema.safeParse(answer.json);
      const id = a.success ? a.data.message_id : undefined;
      return { kind: 'delivered', message_id: id === undefined ? null : String(id) };
    }
    const code = `http_${answer.status}`;
    const common = commonOutcome(answer, code, excerpt(answer.text), null);
    if (common) return common;
    // A 409 from a receiver that keys on message_id means it already has this message.
    if (answer.status === 409) return { kind: 'delivered', message_id: null };
    return { kind: 'failed', error: platformError(code, excerpt(answer.text) || `HTTP ${answer.status}`, answer) };
  },
};
