// Reading platform answers: rate limits (retry_after, Retry-After), server errors, bounded excerpts.
import type { OutboxError } from '../../stores/delivery-types.js';
import type { Outcome, PlatformAnswer } from './types.js';

const EXCERPT = 300;

/** Seconds from a Retry-After header: delta-seconds or an HTTP date. */
export function retryAfterHeader(answer: PlatformAnswer, nowMs = Date.now()): number | null {
  const raw = answer.header('retry-after');
  if (raw === null) return null;
  const n = Number(raw);
  if (Number.isFinite(n) && n >= 0) return n;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, (at - nowMs) / 1000);
}

export function platformError(code: string, message: string, answer: PlatformAnswer | null, retryAfterS: number | null = null): OutboxError {
  return { code, message: message.slice(0, EXCERPT), status: answer?.status ?? null, retry_after_s: retryAfterS };
}

/** HTTP statuses every platform means the same way: 429 (with its wait), 5xx (try again). Null otherwise. */
export function commonOutcome(answer: PlatformAnswer, code: string, message: string, retryAfterS: number | null): Outcome | null {
  if (answer.status === 429)
    return { kind: 'retry', error: platformError(code || 'rate_limited', message || 'rate limited', answer, retryAfterS ?? retryAfterHeader(answer)) };
  if (answer.status >= 500)
    return { kind: 'retry', error: platformError(code || `http_${answer.status}`, message || answer.text, answer, retryAfterHeader(answer)) };
  return null;
}

export const excerpt = (text: string): string => text.slice(0, EXCERPT);
