// Bounded head/tail capture of a stream with an exact code-point count (box.md §7.3, §7.4).
import { describe, expect, it } from 'vitest';
import { HeadTailCapture } from '../../../src/runtime/box/capture.js';

describe('HeadTailCapture', () => {
  it('returns the whole text when nothing was dropped', () => {
    const c = new HeadTailCapture(1024);
    c.push(Buffer.from('hi\n'));
    c.push(Buffer.from('there\n'));
    expect(c.rawText()).toBe('hi\nthere\n');
    expect(c.text(100)).toEqual({ text: 'hi\nthere\n', truncated: false });
  });

  it('keeps only the head and the tail of a long stream and counts what was dropped', () => {
    const c = new HeadTailCapture(4096);
    c.push(Buffer.from('a'.repeat(10_000)));
    c.push(Buffer.from('b'));
    for (let i = 0; i < 100; i++) c.push(Buffer.from('c'.repeat(1000)));
    expect(c.clipped).toBe(true);
    expect(c.totalBytes).toBe(110_001);
    const { text, truncated } = c.text(2000);
    expect(truncated).toBe(true);
    const m = /^(a+)\n\n\.\.\. \[(\d+) characters truncated\] \.\.\.\n\n(c+)$/.exec(text);
    expect(m).not.toBeNull();
    expect(Number(m?.[2])).toBe(110_001 - (m?.[1]?.length ?? 0) - (m?.[3]?.length ?? 0));
  });

  it('never produces a broken character at the cut points', () => {
    const c = new HeadTailCapture(1001);
    for (let i = 0; i < 2000; i++) c.push(Buffer.from('é😀'));
    const { text } = c.text(500);
    expect(text).not.toContain('\uFFFD');
    expect(Array.from(text).length).toBeLessThanOrEqual(500);
  });
});
