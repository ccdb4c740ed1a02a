// Slack Web API: chat.postMessage (in the event's thread) and chat.update.
import { z } from 'zod';
import { LbotError } from '../../errors.js';
import { commonOutcome, excerpt, platformError, retryAfterHeader } from './answers.js';
import type { PlatformSender } from './types.js';

const TargetSchema = z.looseObject({ channel: z.string().min(1), ts: z.string().optional(), thread_ts: z.string().nullable().optional() });
const AnswerSchema = z.looseObject({ ok: z.boolean(), ts: z.string().optional(), error: z.string().optional() });
/** Slack errors that mean "try again" rather than "this will never work". */
const TRANSIENT = new Set(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

export const slackSender: PlatformSender = {
  request({ base, token, item }) {
    const t = TargetSchema.safeParse(item.target);
    if (!t.success) throw new LbotError('invalid_argument', 'slack reply target has no channel');
    if (!token) throw new LbotError('config.invalid', `platform account ${item.account}: slack needs a token`);
    const headers = { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${token}` };
    if (item.op === 'edit') {
      if (!item.edits_message_id) throw new LbotError('invalid_argument', 'the message this edit changes was never delivered');
      return {
        method: 'POST',
        url: `${base}/chat.update`,
        headers,
        body: JSON.stringify({ channel: t.data.channel, ts: item.edits_message_id, text: item.text }),
      };
    }
    // Answers stay in the event's thread; a message outside a thread is answered in the channel.
    const body = { channel: t.data.channel, text: item.text, ...(t.data.thread_ts ? { thread_ts: t.data.thread_ts } : {}) };
    return { method: 'POST', url: `${base}/chat.postMessage`, headers, body: JSON.stringify(body) };
  },
  read(answer) {
    const a = AnswerSchema.safeParse(answer.json);
    if (answer.status === 200 && a.success && a.data.ok) return { kind: 'delivered', message_id: a.data.ts ?? null };
    const code = a.success ? `slack_${a.data.error ?? 'error'}` : `http_${answer.status}`;
    const message = a.success ? (a.data.error ?? '') : excerpt(answer.text);
    const common = commonOutcome(answer, code, message, null);
    if (common) return common;
    if (a.success && TRANSIENT.has(a.data.error ?? '')) return { kind: 'retry', error: platformError(code, message, answer, retryAfterHeader(answer)) };
    return { kind: 'failed', error: platformError(code, message || `HTTP ${answer.status}`, answer) };
  },
};
