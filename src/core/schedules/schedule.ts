// Schedules: a cron expression (croner) and the event each tick fires, kept in the config (`lbot schedule add`).
import { Cron } from 'croner';
import { z } from 'zod';
import { LbotError } from '../errors.js';
import { EventEnvelopeSchema, JsonObjectSchema, type EventEnvelope, type JsonObject } from '../protocol/event.js';

export const DEFAULT_TICK_EVENT_TYPE = 'schedule.tick';
/** After a long stop, missed ticks older than this are not looked at (the latest one still fires). */
export const MAX_CATCH_UP_S = 24 * 3600;

export const ScheduleSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'names are 1-64 letters, digits, dots, dashes or underscores'),
  cron: z.string().min(1).max(200),
  tz: z.string().min(1).nullable().default(null),
  /** Fields of the event each tick fires (an envelope without ids); event_type defaults to schedule.tick. */
  event: JsonObjectSchema.default({}),
  enabled: z.boolean().default(true),
});
export type Schedule = z.infer<typeof ScheduleSchema>;

/** The parsed cron of a schedule; an expression or zone croner refuses is invalid_argument. */
export function cronOf(s: Pick<Schedule, 'name' | 'cron' | 'tz'>): Cron {
  try {
    // croner reads an unknown zone only when it computes a time; Intl refuses it up front.
    if (s.tz) new Intl.DateTimeFormat('en-US', { timeZone: s.tz });
    return new Cron(s.cron, { ...(s.tz ? { timezone: s.tz } : {}), paused: true });
  } catch (err) {
    throw new LbotError(
      'invalid_argument',
      `schedule ${s.name}: ${JSON.stringify(s.cron)}${s.tz ? ` in ${s.tz}` : ''} is not a valid cron expression: ${err instanceof Error ? err.message : String(err)}`,
      {
        hint: 'five or six fields, e.g. "*/5 * * * *" (every five minutes) or "* * * * * *" (every second)',
      },
    );
  }
}

/**
 * The tick to fire now: the latest scheduled instant in (cursor, now]. Ticks between cursor and that one
 * were missed (serve was down) and are skipped: a schedule catches up with one run, not a burst.
 */
export function dueTick(cron: Cron, cursorMs: number, nowMs: number): { tickMs: number | null; skipped: number } {
  let at = cron.nextRun(new Date(Math.max(cursorMs, nowMs - MAX_CATCH_UP_S * 1000)));
  let last: number | null = null;
  let seen = 0;
  while (at && at.getTime() <= nowMs) {
    last = at.getTime();
    seen += 1;
    at = cron.nextRun(at);
  }
  return { tickMs: last, skipped: Math.max(0, seen - 1) };
}

/** The envelope a tick fires: the schedule's event with a deterministic id per tick. */
export function tickEnvelope(s: Schedule, tickMs: number, how: 'tick' | 'run_now' = 'tick'): EventEnvelope {
  const e: JsonObject = s.event;
  const data = JsonObjectSchema.safeParse(e.data);
  const tickS = tickMs / 1000;
  const parsed = EventEnvelopeSchema.safeParse({
    event_type: DEFAULT_TICK_EVENT_TYPE,
    input: {},
    delivery: { surface: 'none' },
    ...e,
    event_id: `schedule:${s.name}:${how === 'tick' ? '' : 'now:'}${tickMs}`,
    source: 'scheduler',
    event_time: tickS,
    data: { ...(data.success ? data.data : {}), schedule: s.name, tick_at: new Date(tickMs).toISOString(), fired_by: how },
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LbotError(
      'invalid_argument',
      `schedule ${s.name}: its event is not a valid envelope: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}
