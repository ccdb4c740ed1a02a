// Which run results become outbox rows: a reply to a platform event, split at the platform's limit,
// or one message edited in place while the reply streams (throttled).
import type { Binding } from '../protocol/binding.js';
import type { Message, MessageChunk } from '../protocol/context.js';
import type { EventEnvelope, JsonObject } from '../protocol/event.js';
import { messageText } from '../host/result-normalizer.js';
import type { OutboxDraft } from '../stores/delivery-types.js';
import { accountForBot, type PlatformAccount } from './accounts.js';
import { splitMessage } from './split.js';
import { isRecord } from '../json.js';

/** At most one streaming edit per this many milliseconds (IM platforms rate-limit edits). */
export const STREAM_EDIT_INTERVAL_MS = 1000;

export type ReplyRoute = { account: PlatformAccount; target: JsonObject; limit: number | null; stream: boolean };

/** Where a run's messages go, or null: not a platform event, nothing to answer, replies off, or no account. */
export function replyRoute(event: EventEnvelope, binding: Binding, accounts: readonly PlatformAccount[]): ReplyRoute | null {
  const d = event.delivery;
  if (d.surface !== 'platform' || !d.reply_target || !binding.delivery_policy.enable_reply) return null;
  const caps = d.platform_capabilities;
  const platform = typeof caps.platform === 'string' ? caps.platform : null;
  if (!platform) return null;
  const account = accountForBot(accounts, platform, event.bot_id);
  if (!account) return null;
  const limits = [d.max_message_size, binding.delivery_policy.max_message_size].filter((n): n is number => typeof n === 'number' && n > 0);
  return {
    account,
    target: d.reply_target,
    limit: limits.length ? Math.min(...limits) : null,
    stream: binding.delivery_policy.enable_streaming && d.supports_edit && caps.streaming_mode === 'edit',
  };
}

/**
 * A Discord interaction received over HTTP is answered on its interaction webhook: serve has deferred it
 * (type 5), the first reply edits that deferred response, later ones are follow-ups. The token that
 * needs stays out of the envelope (it is a credential); it comes from the raw body into the outbox row.
 */
export function withInteractionToken(route: ReplyRoute, event: EventEnvelope, raw: unknown): ReplyRoute {
  if (route.account.platform !== 'discord' || event.event_type !== 'interaction.invoked') return route;
  if (!isRecord(raw) || 'op' in raw || typeof raw.token !== 'string' || raw.token === '') return route;
  if (typeof route.target.application_id !== 'string' || typeof route.target.interaction_id !== 'string') return route;
  return { ...route, target: { ...route.target, interaction_token: raw.token } };
}

/**
 * A Telegram button press (callback_query) keeps a progress indicator on the user's button until it is
 * answered: the answer (answerCallbackQuery, no text) is recorded as soon as the run starts.
 */
export function callbackAnswerDraft(route: ReplyRoute, event: EventEnvelope, runId: string): OutboxDraft | null {
  if (route.account.platform !== 'telegram' || event.event_type !== 'interaction.invoked') return null;
  const id = route.target.callback_query_id;
  if (typeof id !== 'string' || id === '') return null;
  return {
    idempotency_key: `${runId}:answer`,
    account: route.account.name,
    platform: route.account.platform,
    op: 'send',
    run_id: runId,
    event_id: event.event_id,
    conversation_id: event.conversation_id,
    target: { callback_query_id: id, answer_callback_query: true },
    text: '',
    edits_key: null,
  };
}

type Meta = { run_id: string; event: EventEnvelope };

function draft(route: ReplyRoute, meta: Meta, key: string, op: 'send' | 'edit', text: string, editsKey: string | null = null): OutboxDraft {
  // The run's first message answers a deferred interaction (edits its response); the rest follow up.
  const first = op === 'send' && 'interaction_token' in route.target && (key.endsWith(':m0:p0') || key.endsWith(':m0:stream'));
  return {
    idempotency_key: key,
    account: route.account.name,
    platform: route.account.platform,
    op,
    run_id: meta.run_id,
    event_id: meta.event.event_id,
    conversation_id: meta.event.conversation_id,
    target: first ? { ...route.target, interaction_original: true } : route.target,
    text,
    edits_key: editsKey,
  };
}

/**
 * The outbox rows of one run, message by message. Keys are `<run>:m<n>:…`, so recording a result
 * twice (a resumed run) never produces a second message.
 */
export class RunReplies {
  #index = 0;
  /** The streaming message of the current reply: its send key, edits so far, when the last one was recorded. */
  #stream: { key: string; edits: number; lastMs: number; text: string } | null = null;

  constructor(
    private readonly route: ReplyRoute,
    private readonly meta: Meta,
  ) {}

  /** A streamed chunk: the first one sends the message, later ones edit it at most once per interval. */
  delta(chunk: MessageChunk, nowMs: number): OutboxDraft[] {
    if (!this.route.stream) return [];
    const text =
      typeof chunk.all_content === 'string' ? chunk.all_content : `${this.#stream?.text ?? ''}${typeof chunk.content === 'string' ? chunk.content : ''}`;
    const head = splitMessage(text, this.route.limit)[0];
    if (head === undefined) return [];
    const base = `${this.meta.run_id}:m${this.#index}`;
    if (!this.#stream) {
      this.#stream = { key: `${base}:stream`, edits: 0, lastMs: nowMs, text };
      return [draft(this.route, this.meta, this.#stream.key, 'send', head)];
    }
    const s = this.#stream;
    s.text = text;
    if (nowMs - s.lastMs < STREAM_EDIT_INTERVAL_MS) return [];
    s.lastMs = nowMs;
    s.edits += 1;
    return [draft(this.route, this.meta, `${base}:edit${s.edits}`, 'edit', head, s.key)];
  }

  /** A completed message: sent split at the limit, or the streamed message's final edit plus the rest. */
  completed(message: Message): OutboxDraft[] {
    const text = messageText(message) ?? '';
    const parts = splitMessage(text, this.route.limit);
    const base = `${this.meta.run_id}:m${this.#index}`;
    const stream = this.#stream;
    this.#index += 1;
    this.#stream = null;
    if (stream) {
      const [head, ...rest] = parts;
      return [
        ...(head === undefined ? [] : [draft(this.route, this.meta, `${base}:final`, 'edit', head, stream.key)]),
        ...rest.map((p, i) => draft(this.route, this.meta, `${base}:p${i + 1}`, 'send', p)),
      ];
    }
    return parts.map((p, i) => draft(this.route, this.meta, `${base}:p${i}`, 'send', p));
  }
}
