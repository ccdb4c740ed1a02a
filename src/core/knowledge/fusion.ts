// Reciprocal rank fusion (Cormack et al., SIGIR 2009): merges ranked lists by Σ 1 / (k + rank).

/** The constant of the original paper; it damps the weight of the very first ranks. */
export const RRF_K = 60;

/** Fuses ranked id lists (best first) into one, best first, with each id's fused score. */
export function reciprocalRankFusion(lists: ReadonlyArray<readonly number[]>, k = RRF_K): Array<{ id: number; score: number }> {
  const scores = new Map<number, number>();
  for (const list of lists) {
    list.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + 1 / (k + rank + 1)));
  }
  return [...scores.entries()].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || a.id - b.id);
}

/** An FTS5 MATCH expression from free text: each word quoted (no operator injection), any word may match. */
export function ftsQuery(text: string): string | null {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 64);
  const unique = [...new Set(words)];
  return unique.length ? unique.map((w) => `"${w}"`).join(' OR ') : null;
}
