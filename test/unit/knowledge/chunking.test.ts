// Chunking along headings and paragraphs within a token budget, with overlap across size cuts.
import { describe, expect, it } from 'vitest';
import { decode, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { chunkSections, markdownSections } from '../../../src/core/knowledge/chunking.js';

const tok = { encode: (t: string) => encode(t), decode: (ids: number[]) => decode(ids) };

describe('markdownSections', () => {
  it('splits on ATX headings, keeps the heading trail, and ignores # inside fenced code', () => {
    const md = ['# Guide', 'intro', '## Install', 'run it', '```sh', '# not a heading', '```', '## Use', 'use it', '# Other', 'x'].join('\n');
    const sections = markdownSections(md);
    expect(sections.map((s) => s.headings)).toEqual([['Guide'], ['Guide', 'Install'], ['Guide', 'Use'], ['Other']]);
    expect(sections[1]?.text).toContain('# not a heading');
  });
});

describe('chunkSections', () => {
  it('starts a chunk at every section and prefixes the heading trail', () => {
    const chunks = chunkSections(markdownSections('# A\none\n\n# B\ntwo'), { chunkTokens: 100, overlap: 10 }, tok);
    expect(chunks.map((c) => c.text)).toEqual(['A\n\none', 'B\n\ntwo']);
    expect(chunks.map((c) => c.ordinal)).toEqual([0, 1]);
  });

  it('packs paragraphs within the budget, never exceeds it, and overlaps across a size cut', () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} talks about tides and harbours number ${i}.`);
    const chunks = chunkSections([{ headings: [], text: paragraphs.join('\n\n') }], { chunkTokens: 60, overlap: 8 }, tok);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) expect(c.tokens).toBeLessThanOrEqual(60 + 4);
    // the start of each later chunk repeats the end of the one before
    for (let i = 1; i < chunks.length; i++) {
      const prev = chunks[i - 1]?.text ?? '';
      const head = (chunks[i]?.text ?? '').split('\n\n')[0] ?? '';
      expect(prev.endsWith(head.trim()), `chunk ${i}`).toBe(true);
    }
    const all = chunks.map((c) => c.text).join(' ');
    for (const p of paragraphs) expect(all).toContain(p);
  });

  it('cuts a paragraph with no breaks by tokens, and no overlap when asked for none', () => {
    const long = 'word '.repeat(500).trim();
    const chunks = chunkSections([{ headings: [], text: long }], { chunkTokens: 50, overlap: 0 }, tok);
    expect(chunks.length).toBeGreaterThanOrEqual(10);
    for (const c of chunks) expect(c.tokens).toBeLessThanOrEqual(50);
    expect(
      chunks
        .map((c) => c.text)
        .join('')
        .replace(/\s+/g, ' ')
        .trim()
        .split(' ').length,
    ).toBe(500);
  });
});
