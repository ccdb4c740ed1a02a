// Which results become outbox rows: splitting at the limit, streaming edits (fake time), routing to accounts.
import { describe, expect, it } from 'vitest';
import { PlatformAccountSchema } from '../../../src/core/delivery/accounts.js';
import { replyRoute, RunReplies, STREAM_EDIT_INTERVAL_MS } from '../../../src/core/delivery/replies.js';
import { splitMessage } from '../../../src/core/delivery/split.js';
import { BindingSchema } from '../../../src/core/protocol/binding.js';
import { EventEnvelopeSchema } from '../../../src/core/protocol/event.js';
import { normalizePlatformPayload } from '../../../src/core/gateway/index.js';
import { readFileSync } from 'node:fs';

const telegramUpdate: unknown = JSON.parse(readFileSync(new URL('../../../fixtures/platform/telegram/private_text.teloxide.json', import.meta.url), 'utf8'));

function telegramEvent(botId?: string) {
  const r = normalizePlatformPayload('telegram', telegramUpdate, { receivedAt: 1, ...(botId ? { botId } : {}) });
  if (r.kind !== 'event') throw new Error('not an event');
  return EventEnvelopeSchema.parse(r.envelope);
}
const tg = PlatformAccountSchema.parse({ name: 'tg', platform: 'telegram', token_env: 'T' });
const binding = (delivery: Record<string, unknown> = {}) => BindingSchema.parse({ binding_id: 'b', runner_id: 'plugin:a/b/c', delivery_policy: delivery });

describe('splitMessage', () => {
  it('keeps short text whole and drops empty text', () => {
    expect(splitMessage('hi', 10)).toEqual(['hi']);
    expect(splitMessage('', 10)).toEqual([]);
    expect(splitMessage('x'.repeat(50), null)).toHaveLength(1);
  });
  it('cuts at newlines, then spaces, then hard, never inside a surrogate pair', () => {
    expect(splitMessage('aaaa\nbbbb\ncc', 10)).toEqual(['aaaa\nbbbb', 'cc']);
    expect(splitMessage('aaaa bbbb cc', 10)).toEqual(['aaaa bbbb', 'cc']);
    const parts = splitMessage('😀'.repeat(5), 3);
    expect(parts.every((p) => p.length <= 3 && !/[\ud800-\udbff]$/.test(p))).toBe(true);
    expect(parts.join('')).toBe('😀'.repeat(5));
    const long = 'word '.repeat(2000);
    const telegram = splitMessage(long, 4096);
    expect(telegram.every((p) => p.length <= 4096)).toBe(true);
    expect(telegram.join(' ').replace(/\s+/g, ' ').trim()).toBe(long.trim());
  });
});

describe('replyRoute', () => {
  it('routes a Telegram event to the account bound to its bot, with the platform limit', () => {
    const route = replyRoute(telegramEvent('telegram:tg'), binding(), [tg]);
    expect(route).toMatchObject({ account: { name: 'tg' }, limit: 4096, stream: true });
    expect(route?.target).toHaveProperty('chat_id');
  });
  it('takes the smaller of the platform and binding limits; streaming and replies follow the binding', () => {
    expect(replyRoute(telegramEvent('telegram:tg'), binding({ max_message_size: 100, enable_streaming: false }), [tg])).toMatchObject({
      limit: 100,
      stream: false,
    });
    expect(replyRoute(telegramEvent('telegram:tg'), binding({ enable_reply: false }), [tg])).toBeNull();
  });
  it('an event of another bot, or of no bot with two candidate accounts, gets no reply', () => {
    expect(replyRoute(telegramEvent('telegram:other'), binding(), [tg])).toBeNull();
    const tg2 = PlatformAccountSchema.parse({ name: 'tg2', platform: 'telegram', token_env: 'T' });
    expect(replyRoute(telegramEvent(), binding(), [tg])).not.toBeNull();
    expect(replyRoute(telegramEvent(), binding(), [tg, tg2])).toBeNull();
  });
});

describe('RunReplies', () => {
  const route = () => replyRoute(telegramEvent('telegram:tg'), binding({ max_message_size: 10 }), [tg])!;
  const event = telegramEvent('telegram:tg');

  it('a completed message becomes one row per part, keyed by run and message', () => {
    const r = new RunReplies(route(), { run_id: 'r1', event });
    const rows = r.completed({ role: 'assistant', content: 'aaaa bbbb cccc' });
    expect(rows.map((d) => [d.idempotency_key, d.op, d.text])).toEqual([
      ['r1:m0:p0', 'send', 'aaaa bbbb'],
      ['r1:m0:p1', 'send', 'cccc'],
    ]);
    expect(r.completed({ role: 'assistant', content: 'next' })[0]?.idempotency_key).toBe('r1:m1:p0');
  });

  it('streaming sends the first chunk, edits at most once per interval, and ends with a final edit plus the overflow', () => {
    const r = new RunReplies(route(), { run_id: 'r1', event });
    let t = 1_000_000;
    const chunk = (all: string) => ({ role: 'assistant', content: null, all_content: all, is_final: false, msg_sequence: 0 });
    expect(r.delta(chunk('he'), t).map((d) => [d.op, d.text])).toEqual([['send', 'he']]);
    expect(r.delta(chunk('hell'), (t += STREAM_EDIT_INTERVAL_MS - 1))).toEqual([]);
    const edit = r.delta(chunk('hello'), (t += 1));
    expect(edit.map((d) => [d.op, d.text, d.edits_key])).toEqual([['edit', 'hello', 'r1:m0:stream']]);
    expect(r.delta(chunk('hello w'), (t += 10))).toEqual([]);
    const done = r.completed({ role: 'assistant', content: 'hello world again' });
    expect(done.map((d) => [d.idempotency_key, d.op, d.text, d.edits_key])).toEqual([
      ['r1:m0:final', 'edit', 'hello', 'r1:m0:stream'],
      ['r1:m0:p1', 'send', 'world', null],
      ['r1:m0:p2', 'send', 'again', null],
    ]);
  });

  it('without streaming, deltas record nothing', () => {
    const r = new RunReplies(replyRoute(event, binding({ enable_streaming: false }), [tg])!, { run_id: 'r1', event });
    expect(r.delta({ role: 'assistant', content: 'x', is_final: false, msg_sequence: 0 }, 0)).toEqual([]);
  });
});
