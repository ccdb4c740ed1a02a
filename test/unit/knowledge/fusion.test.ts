// Reciprocal rank fusion and the FTS5 expression built from free text.
import { describe, expect, it } from 'vitest';
import { ftsQuery, reciprocalRankFusion, RRF_K } from '../../../src/core/knowledge/fusion.js';

describe('reciprocalRankFusion', () => {
  it('ranks an id found high in both lists first, and sums 1 / (k + rank)', () => {
    const fused = reciprocalRankFusion([
      [1, 2, 3],
      [3, 1, 4],
    ]);
    expect(fused.map((f) => f.id)).toEqual([1, 3, 2, 4]);
    expect(fused[0]?.score).toBeCloseTo(1 / (RRF_K + 1) + 1 / (RRF_K + 2));
  });

  it('breaks ties by id, so equal input gives equal output', () => {
    expect(reciprocalRankFusion([[5], [6]]).map((f) => f.id)).toEqual([5, 6]);
  });
});

describe('ftsQuery', () => {
  it('quotes every word so FTS5 operators and syntax in the query are plain text', () => {
    expect(ftsQuery('deploy NEAR(x) OR "y" AND -z*')).toBe('"deploy" OR "near" OR "x" OR "or" OR "y" OR "and" OR "z"');
  });
  it('returns null when the text has no word', () => {
    expect(ftsQuery('  ?? !! ')).toBeNull();
  });
});
