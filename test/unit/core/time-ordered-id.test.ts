// Row ids sort by creation time (UUIDv7), so the indexes keyed by them grow at one edge.
import { describe, expect, it } from 'vitest';
import { timeOrderedId } from '../../../src/core/time-ordered-id.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('timeOrderedId', () => {
  it('is a version 7 UUID whose first 48 bits are the millisecond clock', () => {
    const before = Date.now();
    const id = timeOrderedId();
    const after = Date.now();
    expect(id).toMatch(V7);
    const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after);
  });

  it('sorts an id after those of earlier milliseconds, and never repeats one', () => {
    const ids = Array.from({ length: 5000 }, () => timeOrderedId());
    const clocks = ids.map((id) => id.slice(0, 13));
    expect([...clocks].sort()).toEqual(clocks);
    for (let i = 1; i < ids.length; i++) if (clocks[i] !== clocks[i - 1]) expect(ids[i] > ids[i - 1]).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
