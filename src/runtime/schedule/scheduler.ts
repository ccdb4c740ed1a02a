// Fires schedule ticks in `lbot serve`: each tick is claimed in the store first, so it runs once even
// across restarts and several serve processes on one data dir; missed ticks collapse into one.
import { cronOf, dueTick, tickEnvelope, type Schedule } from '../../core/schedules/schedule.js';
import type { DeliveryStore } from '../../core/stores/delivery-types.js';
import type { EventEnvelope } from '../../core/protocol/event.js';
import { OWNER } from '../run-owner.js';

/** How often the scheduler looks at the clock (a tick fires at most this late). */
export const SCHEDULER_POLL_MS = 200;

export type SchedulerOptions = {
  store: DeliveryStore;
  schedules(): readonly Schedule[];
  start(envelope: EventEnvelope): Promise<string>;
  warn(message: string): void;
  nowMs?(): number;
};

export class Scheduler {
  readonly #cursors = new Map<string, { cron: string; tz: string | null; at: number }>();
  #timer: NodeJS.Timeout | null = null;
  #busy: Promise<void> | null = null;
  readonly #now: () => number;

  constructor(private readonly o: SchedulerOptions) {
    this.#now = o.nowMs ?? (() => Date.now());
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.poll(), SCHEDULER_POLL_MS);
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#busy;
  }

  /** One look at the clock: fires every schedule whose tick came (exported for tests on fake time). */
  poll(): Promise<void> {
    this.#busy ??= this.#poll().finally(() => (this.#busy = null));
    return this.#busy;
  }

  async #poll(): Promise<void> {
    const now = this.#now();
    for (const s of this.o.schedules()) {
      if (!s.enabled) continue;
      try {
        await this.#check(s, now);
      } catch (err) {
        this.o.warn(`schedule ${s.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  async #check(s: Schedule, now: number): Promise<void> {
    let cursor = this.#cursors.get(s.name);
    // A new or edited schedule starts from its last fired tick (catching up once), else from now.
    if (!cursor || cursor.cron !== s.cron || cursor.tz !== s.tz) {
      const last = this.o.store.lastTick(s.name);
      cursor = { cron: s.cron, tz: s.tz, at: last === null ? now : last * 1000 };
      this.#cursors.set(s.name, cursor);
    }
    const { tickMs, skipped } = dueTick(cronOf(s), cursor.at, now);
    if (tickMs === null) return;
    cursor.at = tickMs;
    if (skipped > 0) this.o.warn(`schedule ${s.name}: ${skipped} missed tick(s) skipped; firing the latest (${new Date(tickMs).toISOString()})`);
    // Another serve (or this one before a restart) may have fired it: the claim decides.
    if (!this.o.store.claimTick(s.name, tickMs / 1000, OWNER, now / 1000)) return;
    try {
      const runId = await this.o.start(tickEnvelope(s, tickMs));
      this.o.store.setTickRuns(s.name, tickMs / 1000, [runId]);
    } catch (err) {
      this.o.warn(`schedule ${s.name}: tick ${new Date(tickMs).toISOString()} started no run: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
