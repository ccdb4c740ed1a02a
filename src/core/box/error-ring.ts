// The recent-error ring (box.md §10.4): the newest records, oldest first, capped.
import type { ErrorRecord } from './model.js';

export const ERROR_RING_SIZE = 50;

/** Appends a record and keeps only the newest `size` records, oldest first. */
export function pushErrorRecord(ring: readonly ErrorRecord[], record: ErrorRecord, size = ERROR_RING_SIZE): ErrorRecord[] {
  const next = [...ring, record];
  return next.length > size ? next.slice(next.length - size) : next;
}
