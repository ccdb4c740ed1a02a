// Ids of the rows the stores index by them (runs, transcript items): UUIDv7, whose first 48 bits are the
// millisecond clock. Ids made one after another sort one after another, so each new row lands on the index
// page the one before it did. With random UUIDs every run touched a page of its own in four indexes keyed by
// run_id, and serve wrote a third more pages to its WAL (docs/benchmarks.md).
import { randomUUID } from 'node:crypto';

/**
 * A new UUIDv7 (RFC 9562): the clock, then the random bits (and variant) of a `randomUUID`, which draws from a
 * pool. The `uuid` package's v7 asks webcrypto's getRandomValues for every id, which cost serve 7 % of its CPU
 * per run; ids of the same millisecond need no order among themselves here, only to sit together.
 */
export function timeOrderedId(): string {
  const clock = Date.now().toString(16).padStart(12, '0');
  return `${clock.slice(0, 8)}-${clock.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
