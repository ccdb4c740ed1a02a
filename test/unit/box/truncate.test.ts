// Tool-output truncation by code points (box.md §7.4; acceptance AC-095).
import { describe, expect, it } from 'vitest';
import { truncateParts, truncateText } from '../../../src/core/box/truncate.js';

const cp = (s: string) => Array.from(s).length;

describe('truncateText', () => {
  it('returns short output and output exactly at the limit unchanged', () => {
    expect(truncateText('hello', 4000)).toEqual({ text: 'hello', truncated: false });
    const exact = 'x'.repeat(4000);
    expect(truncateText(exact, 4000)).toEqual({ text: exact, truncated: false });
  });

  it('keeps ≈60 % head and ≈40 % tail around a notice with the omitted count (AC-095)', () => {
    const text = `${'a'.repeat(10_000)}b${'c'.repeat(10_000)}`;
    const { text: out, truncated } = truncateText(text, 4000);
    expect(truncated).toBe(true);
    expect(cp(out)).toBeLessThanOrEqual(4000);
    const m = /\n\n\.\.\. \[(\d+) characters truncated\] \.\.\.\n\n/.exec(out);
    expect(m).not.toBeNull();
    const [head = '', tail = ''] = out.split(m?.[0] ?? '');
    expect(head).toMatch(/^a+$/);
    expect(tail).toMatch(/^c+$/);
    expect(Math.abs(head.length / (head.length + tail.length) - 0.6)).toBeLessThan(0.01);
    expect(Number(m?.[1])).toBe(text.length - head.length - tail.length);
  });

  it('never splits a surrogate pair', () => {
    const text = '😀'.repeat(5000);
    const { text: out } = truncateText(text, 1000);
    expect(cp(out)).toBeLessThanOrEqual(1000);
    expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });

  it('yields an empty string for a zero limit and only the notice for a tiny one', () => {
    expect(truncateText('abc', 0)).toEqual({ text: '', truncated: true });
    expect(cp(truncateText('x'.repeat(100), 10).text)).toBeLessThanOrEqual(10);
  });

  it('truncateParts works from partial head/tail captures and the true total', () => {
    const head = Array.from('a'.repeat(5000));
    const tail = Array.from('c'.repeat(5000));
    const out = truncateParts(head, tail, 1_000_000, 2000);
    expect(cp(out)).toBeLessThanOrEqual(2000);
    const m = /^(a+)\n\n\.\.\. \[(\d+) characters truncated\] \.\.\.\n\n(c+)$/.exec(out);
    expect(m).not.toBeNull();
    expect(Number(m?.[2])).toBe(1_000_000 - (m?.[1]?.length ?? 0) - (m?.[3]?.length ?? 0));
  });
});
