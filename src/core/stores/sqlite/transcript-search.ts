// How a history search becomes SQL: an FTS5 trigram MATCH for queries of 3+ characters, a scan otherwise.
import { createHash } from 'node:crypto';

/** Queries with fewer characters than this cannot use the trigram index. */
export const TRIGRAM_MIN_CHARS = 3;

/** At most this many trigrams go into the MATCH; the exact substring check runs on the candidates. */
const MAX_MATCH_TRIGRAMS = 8;

/** Case-insensitive literal containment, registered as the SQL function `lbot_icontains(haystack, lowered_needle)`. */
export function icontains(haystack: unknown, loweredNeedle: unknown): number {
  return typeof haystack === 'string' && typeof loweredNeedle === 'string' && haystack.toLowerCase().includes(loweredNeedle) ? 1 : 0;
}

const CJK_BASE = 0x4e00;
const CJK_SPAN = 20992;
const tagCache = new Map<string, string>();

/**
 * The conversation's search tag: exactly three CJK ideographs derived from sha256(conversation_id),
 * which the trigram tokenizer turns into one token. Indexing it next to the content lets FTS5
 * intersect "rows of this conversation" with "rows holding these trigrams" without touching the
 * table; collisions only add candidates, which the exact conversation filter drops.
 */
export function conversationTag(conversation_id: string): string {
  let tag = tagCache.get(conversation_id);
  if (tag === undefined) {
    const h = createHash('sha256').update(conversation_id, 'utf8').digest();
    tag = '';
    for (let i = 0; i < 3; i++) tag += String.fromCodePoint(CJK_BASE + (h.readUInt16BE(i * 2) % CJK_SPAN));
    if (tagCache.size >= 4096) tagCache.clear();
    tagCache.set(conversation_id, tag);
  }
  return tag;
}

function quote(s: string): string {
  return `"${s.replaceAll('"', '""')}"`;
}

/**
 * Non-overlapping trigrams covering the query (plus the last three characters), evenly thinned to
 * MAX_MATCH_TRIGRAMS. An AND of them is a superset of "contains the query"; the exact substring
 * check on each candidate makes it precise. Fewer, disjoint trigrams measured several times faster
 * than the full phrase on common words, because FTS5 merges fewer doclists and checks no positions.
 */
export function queryTrigrams(query: string): string[] {
  const chars = Array.from(query);
  const grams: string[] = [];
  for (let i = 0; i + TRIGRAM_MIN_CHARS <= chars.length; i += TRIGRAM_MIN_CHARS) grams.push(chars.slice(i, i + TRIGRAM_MIN_CHARS).join(''));
  if (chars.length % TRIGRAM_MIN_CHARS !== 0) grams.push(chars.slice(-TRIGRAM_MIN_CHARS).join(''));
  if (grams.length <= MAX_MATCH_TRIGRAMS) return grams;
  const step = (grams.length - 1) / (MAX_MATCH_TRIGRAMS - 1);
  return Array.from({ length: MAX_MATCH_TRIGRAMS }, (_, i) => grams[Math.round(i * step)] ?? '');
}

/** The FTS5 MATCH expression for `query` within one conversation. */
export function matchExpression(conversation_id: string, query: string): string {
  const grams = queryTrigrams(query).map(quote);
  return `conv_tag : ${quote(conversationTag(conversation_id))} AND content : (${grams.join(' AND ')})`;
}

/** True when the query is long enough for the trigram index. */
export function usesIndex(query: string): boolean {
  return Array.from(query).length >= TRIGRAM_MIN_CHARS;
}
