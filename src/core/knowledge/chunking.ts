// Splits a document into retrieval chunks: along headings, then paragraphs, then lines and sentences, within a
// token budget; a chunk cut for size starts with the last `overlap` tokens of the one before.

/** The tokenizer the chunker counts with (gpt-tokenizer's encode/decode in production). */
export type ChunkTokenizer = { encode(text: string): number[]; decode(tokens: number[]): string };

/** A run of text under a heading trail (`["Guide", "Install"]`); plain text is one section with no heading. */
export type Section = { headings: string[]; text: string };

export type Chunk = { ordinal: number; text: string; tokens: number; headings: string[] };

export type ChunkOptions = { chunkTokens: number; overlap: number };

const ATX = /^(#{1,6})[ \t]+(.+?)[ \t#]*$/;

/** Markdown sections by ATX heading; fenced code is kept whole (a `#` inside it is no heading). */
export function markdownSections(source: string): Section[] {
  const sections: Section[] = [];
  const trail: string[] = [];
  let lines: string[] = [];
  let fence: string | null = null;
  const flush = () => {
    const text = lines.join('\n').trim();
    if (text) sections.push({ headings: [...trail], text });
    lines = [];
  };
  for (const line of source.split(/\r?\n/)) {
    const fenceMark = /^\s*(```|~~~)/.exec(line)?.[1];
    if (fenceMark) fence = fence === null ? fenceMark : fence === fenceMark ? null : fence;
    const heading = fence === null && !fenceMark ? ATX.exec(line) : null;
    if (heading?.[1] && heading[2]) {
      flush();
      trail.length = Math.min(trail.length, heading[1].length - 1);
      while (trail.length < heading[1].length - 1) trail.push('');
      trail.push(heading[2]);
      continue;
    }
    lines.push(line);
  }
  flush();
  return sections.map((s) => ({ headings: s.headings.filter(Boolean), text: s.text }));
}

/** Pieces of at most `budget` tokens: paragraphs, else lines, else sentences, else a hard cut by tokens. */
function pieces(text: string, budget: number, tok: ChunkTokenizer): string[] {
  const levels = [/\n\s*\n/, /\n/, /(?<=[.!?。！？])\s+/];
  const split = (part: string, level: number): string[] => {
    if (tok.encode(part).length <= budget) return [part];
    const sep = levels[level];
    if (!sep) {
      const ids = tok.encode(part);
      const out: string[] = [];
      for (let i = 0; i < ids.length; i += budget) out.push(tok.decode(ids.slice(i, i + budget)));
      return out;
    }
    return part
      .split(sep)
      .map((p) => p.trim())
      .filter(Boolean)
      .flatMap((p) => split(p, level + 1));
  };
  return split(text.trim(), 0);
}

/**
 * Chunks sections: each section starts a new chunk; paragraphs are packed while they fit `chunkTokens`
 * (the heading trail, prefixed to every chunk, counts too). Overlap only bridges cuts inside a section.
 */
export function chunkSections(sections: readonly Section[], opts: ChunkOptions, tok: ChunkTokenizer): Chunk[] {
  const chunks: Chunk[] = [];
  for (const section of sections) {
    const prefix = section.headings.length ? `${section.headings.join(' › ')}\n\n` : '';
    const prefixTokens = prefix ? tok.encode(prefix).length : 0;
    // A trail longer than half the budget is dropped rather than starving the text.
    const head = prefixTokens * 2 <= opts.chunkTokens ? prefix : '';
    const budget = Math.max(1, opts.chunkTokens - (head ? prefixTokens : 0));
    const overlap = Math.min(opts.overlap, Math.floor(budget / 2));
    let body: string[] = [];
    let bodyTokens = 0;
    const emit = () => {
      const text = body.join('\n\n');
      chunks.push({ ordinal: chunks.length, text: head + text, tokens: tok.encode(head + text).length, headings: section.headings });
      return text;
    };
    for (const piece of pieces(section.text, budget - overlap, tok)) {
      const n = tok.encode(piece).length;
      if (body.length > 0 && bodyTokens + n > budget) {
        const last = emit();
        const tail = overlap > 0 ? tok.decode(tok.encode(last).slice(-overlap)).trim() : '';
        body = tail ? [tail] : [];
        bodyTokens = tail ? tok.encode(tail).length : 0;
      }
      body.push(piece);
      bodyTokens += n;
    }
    if (body.length > 0) emit();
  }
  return chunks;
}
