// The webhook redelivery filter: ids are remembered for a window, bounded in number, on an injected clock.
import { describe, expect, it } from 'vitest';
import { createRedeliveryFilter, DEFAULT_REDELIVERY_WINDOW_MS, normalizePlatformPayload } from '../../../src/core/gateway/index.js';
import { FIXTURE_CASES, loadCase } from './fixture-table.js';
import { envelopeOf } from './helpers.js';

function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}

describe('createRedeliveryFilter', () => {
  it('admits an id once within the window (10 minutes by default), and again after it', () => {
    const c = clock();
    const filter = createRedeliveryFilter({ now: c.now });
    expect(DEFAULT_REDELIVERY_WINDOW_MS).toBe(600_000);
    expect(filter.admit('slack:a')).toBe(true);
    c.advance(DEFAULT_REDELIVERY_WINDOW_MS - 1);
    expect(filter.admit('slack:a')).toBe(false);
    c.advance(1);
    expect(filter.admit('slack:a')).toBe(true);
  });

  it('counts the window from the first delivery, not from each retry', () => {
    const c = clock();
    const filter = createRedeliveryFilter({ windowMs: 100, now: c.now });
    filter.admit('x');
    c.advance(60);
    expect(filter.admit('x')).toBe(false);
    c.advance(40);
    expect(filter.admit('x')).toBe(true);
  });

  it('forgets expired ids, so its size follows the window', () => {
    const c = clock();
    const filter = createRedeliveryFilter({ windowMs: 100, now: c.now });
    filter.admit('a');
    c.advance(50);
    filter.admit('b');
    expect(filter.size()).toBe(2);
    c.advance(50);
    expect(filter.size()).toBe(1);
    c.advance(50);
    expect(filter.size()).toBe(0);
  });

  it('is bounded: past maxEntries the oldest ids are forgotten first', () => {
    const c = clock();
    const filter = createRedeliveryFilter({ maxEntries: 3, now: c.now });
    for (const id of ['a', 'b', 'c', 'd']) filter.admit(id);
    expect(filter.size()).toBe(3);
    expect(filter.admit('d')).toBe(false);
    expect(filter.admit('a')).toBe(true);
  });

  it('forget lets a retry through after a failed hand-off', () => {
    const filter = createRedeliveryFilter({ now: clock().now });
    filter.admit('a');
    filter.forget('a');
    expect(filter.admit('a')).toBe(true);
  });

  it('refuses nonsense limits', () => {
    expect(() => createRedeliveryFilter({ windowMs: 0, now: Date.now })).toThrow(/windowMs/);
    expect(() => createRedeliveryFilter({ maxEntries: 0.5, now: Date.now })).toThrow(/maxEntries/);
  });

  it('admits each fixture event once, even where test data reuses platform ids, and drops a redelivery', () => {
    const filter = createRedeliveryFilter({ now: clock().now });
    const events = FIXTURE_CASES.filter((c) => c.expect.kind === 'event');
    const dropped = events.filter((c) => !filter.admit(envelopeOf(normalizePlatformPayload(c.platform, loadCase(c))).event_id)).map((c) => c.file);
    // Slack's docs show one message (same event_id, channel and ts) under both message.groups and message.mpim.
    expect(dropped).toEqual(['slack/event_callback.message.mpim.slack-docs.json']);
    for (const c of events) {
      expect(filter.admit(envelopeOf(normalizePlatformPayload(c.platform, loadCase(c))).event_id), c.file).toBe(false);
    }
  });
});
