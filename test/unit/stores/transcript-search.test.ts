// How history search queries become FTS5 MATCH expressions.
import { describe, expect, it } from 'vitest';
import { conversationTag, icontains, matchExpression, queryTrigrams, usesIndex } from '../../../src/core/stores/sqlite/transcript-search.js';

describe('transcript search planning', () => {
  it('covers the query with disjoint trigrams plus the tail', () => {
    expect(queryTrigrams('deploy')).toEqual(['dep', 'loy']);
    expect(queryTrigrams('deploys')).toEqual(['dep', 'loy', 'oys']);
    expect(queryTrigrams('abc')).toEqual(['abc']);
    expect(queryTrigrams('a😀bc')).toEqual(['a😀b', '😀bc']);
  });

  it('thins long queries to at most 8 trigrams, keeping the first and last', () => {
    const q = 'the quick brown fox jumps over the lazy dog again and again';
    const grams = queryTrigrams(q);
    expect(grams).toHaveLength(8);
    expect(grams[0]).toBe('the');
    expect(grams.at(-1)).toBe(q.slice(-3));
  });

  it('tags a conversation with exactly three characters, stable per id', () => {
    const tag = conversationTag('c1');
    expect(Array.from(tag)).toHaveLength(3);
    expect(conversationTag('c1')).toBe(tag);
    expect(conversationTag('c2')).not.toBe(tag);
  });

  it('quotes every token so FTS5 operators in the query stay literal', () => {
    const expr = matchExpression('c1', 'a "b" OR c*');
    expect(expr).toContain('content : ("a """ AND "b"" " AND "OR " AND " c*")');
    expect(expr.startsWith(`conv_tag : "${conversationTag('c1')}" AND content : (`)).toBe(true);
  });

  it('uses the index from three characters on', () => {
    expect(usesIndex('ab')).toBe(false);
    expect(usesIndex('abc')).toBe(true);
    expect(usesIndex('😀😀')).toBe(false);
  });

  it('icontains is a case-insensitive literal containment', () => {
    expect(icontains('Deploy at 5%', '5%')).toBe(1);
    expect(icontains('Deploy at 5%', 'y_a')).toBe(0);
    expect(icontains(null, 'x')).toBe(0);
  });
});
