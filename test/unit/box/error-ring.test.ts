// The recent-error ring keeps the newest 50 records, oldest first (box.md §10.4; AC-117).
import { describe, expect, it } from 'vitest';
import { pushErrorRecord } from '../../../src/core/box/error-ring.js';
import type { ErrorRecord } from '../../../src/core/box/model.js';

describe('error ring', () => {
  it('keeps the newest 50 of 60 failures; the first kept is the 11th', () => {
    let ring: ErrorRecord[] = [];
    for (let i = 1; i <= 60; i++)
      ring = pushErrorRecord(ring, { timestamp: String(i), type: 'BoxValidationError', code: 'box.mount_denied', message: `m${i}`, query_id: null });
    expect(ring).toHaveLength(50);
    expect(ring[0]?.message).toBe('m11');
    expect(ring.at(-1)?.message).toBe('m60');
  });
});
