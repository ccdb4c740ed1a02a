// Config-listed knowledge bases (documents kept in lbot.config.json), ranked by query-term overlap as before
// `lbot kb` existed; kept so existing configs keep answering (docs/knowledge.md).
import type { KnowledgeBaseConfig } from '../../core/config.js';
import { matchesFilters } from '../../core/knowledge/filter-match.js';
import type { KnowledgeFilter, RetrievalEntry } from '../../core/protocol/knowledge.js';

const tokens = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** The best `topK` documents of a config base by term overlap, filtered on their metadata. */
export function rankConfigDocuments(base: KnowledgeBaseConfig, query: string, topK: number, filters: readonly KnowledgeFilter[]): RetrievalEntry[] {
  const terms = new Set(tokens(query));
  if (terms.size === 0) return [];
  return base.documents
    .map((doc, index) => {
      const words = tokens(doc.text);
      const hits = words.filter((w) => terms.has(w)).length;
      const covered = [...terms].filter((t) => words.includes(t)).length;
      const document_id = doc.id ?? `${base.id}:${index}`;
      return {
        kb_id: base.id,
        document_id,
        chunk_id: `${document_id}#0`,
        text: doc.text,
        content: doc.text,
        metadata: doc.metadata,
        score: covered / terms.size + hits / (words.length + 1) / 10,
      };
    })
    .filter((r) => r.score > 0 && matchesFilters(r.metadata, filters))
    .sort((a, b) => b.score - a.score)
    .slice(0, topK);
}
