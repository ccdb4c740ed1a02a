// The store-side text caps: cut once, by code point, marked with '...'; page-size clamping.
import { describe, expect, it } from 'vitest';
import { clampLimit, truncateChars } from '../../../src/core/stores/sqlite/text-limits.js';

describe('truncateChars', () => {
  it('keeps texts within the limit and cuts longer ones to max - 3 + "..."', () => {
    expect(truncateChars('abc', 5)).toBe('abc');
    expect(truncateChars('abcde', 5)).toBe('abcde');
    expect(truncateChars('abcdef', 5)).toBe('ab...');
    expect(truncateChars('x'.repeat(1500), 1000)).toHaveLength(1000);
  });

  it('counts code points, never splitting a surrogate pair', () => {
    const emoji = '😀'.repeat(6);
    expect(truncateChars(emoji, 6)).toBe(emoji);
    expect(truncateChars(emoji, 5)).toBe('😀😀...');
  });
});

describe('clampLimit', () => {
  it('clamps to 1..100 and truncates fractions', () => {
    expect(clampLimit(500)).toBe(100);
    expect(clampLimit(0)).toBe(1);
    expect(clampLimit(-3)).toBe(1);
    expect(clampLimit(7.9)).toBe(7);
    expect(clampLimit(Number.NaN)).toBe(100);
  });
});
