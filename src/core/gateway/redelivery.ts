// Webhook de-duplication: remembers recently seen event ids so platform retries run at most once.
export type RedeliveryFilterOptions = {
  /** How long an id is remembered after its first delivery; default 10 minutes. */
  windowMs?: number;
  /** Upper bound on remembered ids; the oldest are forgotten first. Default 10,000. */
  maxEntries?: number;
  /** Clock in epoch milliseconds; injected so the filter stays pure and testable. */
  now: () => number;
};

export type RedeliveryFilter = {
  /** True when `eventId` is new (process it) and remembers it; false for a redelivery inside the window. */
  admit(eventId: string): boolean;
  /** Forgets an id, e.g. when handling it failed and the platform's retry should be accepted. */
  forget(eventId: string): void;
  /** Number of ids currently remembered. */
  size(): number;
};

export const DEFAULT_REDELIVERY_WINDOW_MS = 10 * 60 * 1000;
export const DEFAULT_REDELIVERY_MAX_ENTRIES = 10_000;

/** Creates a filter; ids are kept in first-seen order, so expiry and eviction both drop from the front. */
export function createRedeliveryFilter(opts: RedeliveryFilterOptions): RedeliveryFilter {
  const windowMs = opts.windowMs ?? DEFAULT_REDELIVERY_WINDOW_MS;
  const maxEntries = opts.maxEntries ?? DEFAULT_REDELIVERY_MAX_ENTRIES;
  if (!(windowMs > 0) || !Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new RangeError(`createRedeliveryFilter: windowMs must be > 0 and maxEntries an integer >= 1 (got ${windowMs}, ${maxEntries})`);
  }
  const seenAt = new Map<string, number>();

  const expire = (now: number): void => {
    for (const [id, at] of seenAt) {
      if (now - at < windowMs) break;
      seenAt.delete(id);
    }
  };

  return {
    admit(eventId) {
      const now = opts.now();
      expire(now);
      const at = seenAt.get(eventId);
      if (at !== undefined && now - at < windowMs) return false;
      seenAt.delete(eventId);
      seenAt.set(eventId, now);
      while (seenAt.size > maxEntries) {
        const oldest = seenAt.keys().next();
        if (oldest.done) break;
        seenAt.delete(oldest.value);
      }
      return true;
    },
    forget(eventId) {
      seenAt.delete(eventId);
    },
    size() {
      expire(opts.now());
      return seenAt.size;
    },
  };
}
