// Tool-output truncation by Unicode code points: head ≈60 % / tail ≈40 % around a notice (box.md §7.4).

function notice(omitted: number): string {
  return `\n\n... [${omitted} characters truncated] ...\n\n`;
}

function cpLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * Truncates text given its first and last code points and its total length in code points.
 * `head` and `tail` may be partial captures of a longer stream (the middle was never kept); they must
 * hold at least the code points this function keeps, which is the case when each is ≥ `limit`.
 */
export function truncateParts(head: readonly string[], tail: readonly string[], total: number, limit: number): string {
  if (limit <= 0) return '';
  let h = 0;
  let t = 0;
  let n = notice(total);
  for (let i = 0; i < 4; i++) {
    n = notice(Math.max(total - h - t, 0));
    const available = limit - cpLength(n);
    if (available <= 0) return Array.from(n).slice(0, limit).join('');
    const nh = Math.floor(available * 0.6);
    const nt = available - nh;
    if (nh === h && nt === t) break;
    h = nh;
    t = nt;
  }
  const headText = head.slice(0, h).join('');
  const tailText = t > 0 ? tail.slice(Math.max(tail.length - t, 0)).join('') : '';
  return Array.from(headText + n + tailText)
    .slice(0, limit)
    .join('');
}

/** Truncates `text` to at most `limit` code points; returns the text and whether it was cut. */
export function truncateText(text: string, limit: number): { text: string; truncated: boolean } {
  // Fast path: a string of UTF-16 length ≤ limit has at most `limit` code points.
  if (text.length <= limit) return { text, truncated: false };
  const cps = Array.from(text);
  if (cps.length <= limit) return { text, truncated: false };
  if (limit <= 0) return { text: '', truncated: true };
  return { text: truncateParts(cps, cps, cps.length, limit), truncated: true };
}
