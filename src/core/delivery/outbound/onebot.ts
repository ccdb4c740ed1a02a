// OneBot v11 HTTP API: send_msg with a reply segment; the access token as a bearer token.
import { z } from 'zod';
import { LbotError } from '../../errors.js';
import { commonOutcome, excerpt, platformError } from './answers.js';
import type { PlatformSender } from './types.js';

const Id = z.union([z.number(), z.string().regex(/^\d+$/)]);
const TargetSchema = z.looseObject({ message_type: z.enum(['group', 'private']), group_id: Id.optional(), user_id: Id.optional(), message_id: Id.optional() });
const AnswerSchema = z.looseObject({
  status: z.string(),
  retcode: z.number(),
  data: z
    .looseObject({ message_id: z.union([z.number(), z.string()]).optional() })
    .nullable()
    .optional(),
  msg: z.string().optional(),
  wording: z.string().optional(),
});

export const onebotSender: PlatformSender = {
  request({ base, token, item }) {
    const t = TargetSchema.safeParse(item.target);
    if (!t.success) throw new LbotError('invalid_argument', 'onebot reply target has no message_type');
    if (item.op === 'edit') throw new LbotError('invalid_argument', 'OneBot v11 cannot edit a sent message');
    const to = t.data.message_type === 'group' ? { group_id: Number(t.data.group_id) } : { user_id: Number(t.data.user_id) };
    if (Object.values(to).some((v) => !Number.isSafeInteger(v)))
      throw new LbotError('invalid_argument', `onebot reply target has no ${t.data.message_type === 'group' ? 'group_id' : 'user_id'}`);
    // Message segments, not CQ-code text: nothing the runner wrote is parsed as a CQ code.
    const message = [
      ...(t.data.message_id !== undefined ? [{ type: 'reply', data: { id: String(t.data.message_id) } }] : []),
      { type: 'text', data: { text: item.text } },
    ];
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
    return { method: 'POST', url: `${base}/send_msg`, headers, body: JSON.stringify({ message_type: t.data.message_type, ...to, message }) };
  },
  read(answer) {
    const a = AnswerSchema.safeParse(answer.json);
    if (answer.status === 200 && a.success && (a.data.status === 'ok' || a.data.status === 'async') && a.data.retcode === 0) {
      const id = a.data.data?.message_id;
      return { kind: 'delivered', message_id: id === undefined ? null : String(id) };
    }
    const code = a.success ? `onebot_${a.data.retcode}` : `http_${answer.status}`;
    const message = a.success ? (a.data.wording ?? a.data.msg ?? a.data.status) : excerpt(answer.text);
    const common = commonOutcome(answer, code, message, null);
    return common ?? { kind: 'failed', error: platformError(code, message || `HTTP ${answer.status}`, answer) };
  },
};
