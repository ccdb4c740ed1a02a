// The store-side text caps of runner-protocol.md §8.1/§8.2: cut once, marking the cut with '...'.

export const EVENT_SUMMARY_MAX_CHARS = 1000;
export const TRANSCRIPT_CONTENT_MAX_CHARS = 4000;

/**
 * Cuts `value` to `max` characters (code points, so a surrogate pair is never split): the first
 * `max - 3` followed by '...'. Texts within the limit come back unchanged.
 */
export function truncateChars(value: string, max: number): string {
  if (value.length <= max) return value;
  const chars = Array.from(value);
  if (chars.length <= max) return value;
  return chars.slice(0, max - 3).join('') + '...';
}

/** Clamps a page size to 1..max; a non-finite value means `max`. */
export function clampLimit(limit: number, max = 100): number {
  if (!Number.isFinite(limit)) return max;
  return Math.min(max, Math.max(1, Math.trunc(limit)));
}
