// Ids of the rows the stores index by them (runs, transcript items): UUIDv7, whose first 48 bits are the
// millisecond clock. Ids made one after another sort one after another, so each new row lands on the index
// page the one before it did. With random UUIDs every run touched a page of its own in four indexes keyed by
// run_id, and serve wrote a third more pages to its WAL (docs/benchmarks.md).
import { v7 } from 'uuid';

/** A new UUIDv7 (RFC 9562): sorts by creation time, unique like any random UUID. */
export function timeOrderedId(): string {
  return v7();
}
