// Schedules on fake time: which tick is due, missed ticks collapsing into one, and exactly one run per
// tick across a restart and across two schedulers sharing one store (real SQLite).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cronOf, dueTick, ScheduleSchema, tickEnvelope } from '../../../src/core/schedules/schedule.js';
import { openSqliteStores, type SqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { Scheduler } from '../../../src/runtime/schedule/scheduler.js';

const everySecond = ScheduleSchema.parse({ name: 'tick', cron: '* * * * * *', event: { data: { k: 1 } } });
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('dueTick', () => {
  const cron = cronOf(everySecond);
  it('nothing before the next instant; the instant itself once it has come', () => {
    expect(dueTick(cron, T0, T0 + 999)).toEqual({ tickMs: null, skipped: 0 });
    expect(dueTick(cron, T0, T0 + 1000)).toEqual({ tickMs: T0 + 1000, skipped: 0 });
  });
  it('missed ticks collapse into the latest', () => {
    expect(dueTick(cron, T0, T0 + 5500)).toEqual({ tickMs: T0 + 5000, skipped: 4 });
  });
  it('a five-field expression in a time zone', () => {
    const daily = cronOf({ name: 'd', cron: '0 9 * * *', tz: 'Asia/Tokyo' });
    expect(dueTick(daily, Date.UTC(2026, 0, 1, 23, 0), Date.UTC(2026, 0, 2, 0, 30)).tickMs).toBe(Date.UTC(2026, 0, 2, 0, 0));
  });
  it('refuses a bad expression or zone', () => {
    expect(() => cronOf({ name: 'x', cron: 'every day', tz: null })).toThrow(/not a valid cron/);
    expect(() => cronOf({ name: 'x', cron: '* * * * *', tz: 'Mars/Base' })).toThrow(/not a valid cron/);
  });
});

describe('tickEnvelope', () => {
  it("a schedule.tick from the scheduler with a deterministic id and the file's fields", () => {
    const e = tickEnvelope(everySecond, T0);
    expect(e).toMatchObject({
      event_id: `schedule:tick:${T0}`,
      event_type: 'schedule.tick',
      source: 'scheduler',
      event_time: T0 / 1000,
      data: { k: 1, schedule: 'tick', fired_by: 'tick' },
    });
    expect(
      tickEnvelope(ScheduleSchema.parse({ name: 'n', cron: '* * * * *', event: { event_type: 'report.due', source: 'platform', event_id: 'forged' } }), T0),
    ).toMatchObject({ event_type: 'report.due', source: 'scheduler', event_id: `schedule:n:${T0}` });
  });
});

describe('Scheduler', () => {
  let dir: string | null = null;
  let stores: SqliteStores[] = [];
  afterEach(async () => {
    for (const s of stores) s.close();
    stores = [];
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function open(): Promise<SqliteStores> {
    dir ??= await mkdtemp(path.join(os.tmpdir(), 'lbot-sched-'));
    const s = openSqliteStores(dir);
    stores.push(s);
    return s;
  }

  function scheduler(s: SqliteStores, clock: { now: number }, fired: string[], warnings: string[] = []) {
    return new Scheduler({
      store: s.delivery,
      schedules: () => [everySecond],
      start: async (e) => {
        fired.push(e.event_id);
        return `run-${fired.length}`;
      },
      warn: (m) => warnings.push(m),
      nowMs: () => clock.now,
    });
  }

  it('one run per tick; a restart catches up with one run and never repeats a tick', async () => {
    const s = await open();
    const clock = { now: T0 };
    const fired: string[] = [];
    const a = scheduler(s, clock, fired);
    await a.poll();
    expect(fired).toEqual([]);
    for (let i = 1; i <= 3; i++) {
      clock.now = T0 + i * 1000 + 100;
      await a.poll();
      await a.poll();
    }
    expect(fired).toEqual([1, 2, 3].map((i) => `schedule:tick:${T0 + i * 1000}`));
    expect(s.delivery.ticks('tick', 10).map((t) => t.run_ids)).toEqual([['run-3'], ['run-2'], ['run-1']]);

    // Down for 4 s (a kill), then a new scheduler on the same store: the latest missed tick fires once.
    const warnings: string[] = [];
    clock.now = T0 + 7500;
    const b = scheduler(s, clock, fired, warnings);
    await b.poll();
    await b.poll();
    expect(fired.slice(3)).toEqual([`schedule:tick:${T0 + 7000}`]);
    expect(warnings.join('\n')).toContain('3 missed tick(s) skipped');
    expect(new Set(fired).size).toBe(fired.length);
  });

  it('two schedulers on one data dir fire each tick once between them', async () => {
    const s1 = await open();
    const s2 = await open();
    const clock = { now: T0 };
    const fired1: string[] = [];
    const fired2: string[] = [];
    const a = scheduler(s1, clock, fired1);
    const b = scheduler(s2, clock, fired2);
    await Promise.all([a.poll(), b.poll()]);
    for (let i = 1; i <= 5; i++) {
      clock.now = T0 + i * 1000;
      await Promise.all([a.poll(), b.poll()]);
    }
    const all = [...fired1, ...fired2].sort();
    expect(all).toEqual([1, 2, 3, 4, 5].map((i) => `schedule:tick:${T0 + i * 1000}`).sort());
  });
});
