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

/** The distinct words of free text (letters and digits only: no query operator survives), lower-cased, at most 64. */
export function queryWords(text: string): string[] {
  return [...new Set((text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 64))];
}

/** An FTS5 MATCH expression from free text: each word quoted (no operator injection), any word may match. */
export function ftsQuery(text: string): string | null {
  return ftsMatch(queryWords(text));
}

/** The FTS5 MATCH expression of words: any may match; each is an FTS5 string (quotes doubled), never syntax. */
export function ftsMatch(words: readonly string[]): string | null {
  return words.length ? words.map((w) => `"${w.replaceAll('"', '""')}"`).join(' OR ') : null;
}
