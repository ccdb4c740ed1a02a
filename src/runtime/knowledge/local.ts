// The built-in knowledge engine: ranks a configured knowledge base's documents by query-term overlap.
// Small and dependency-free; a deployment with a real vector store plugs in another KnowledgeRetriever.
import type { KnowledgeBaseConfig } from '../../core/config.js';
import type { KnowledgeRetriever } from '../../core/host/api/types.js';

const tokens = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

export function createLocalRetriever(bases: readonly KnowledgeBaseConfig[]): KnowledgeRetriever {
  return async (kb, query, topK) => {
    const base = bases.find((b) => b.id === kb.id);
    const terms = new Set(tokens(query));
    if (!base || terms.size === 0) return [];
    return base.documents
      .map((doc, index) => {
        const words = tokens(doc.text);
        const hits = words.filter((w) => terms.has(w)).length;
        const covered = [...terms].filter((t) => words.includes(t)).length;
        return {
          document_id: doc.id ?? `${base.id}:${index}`,
          content: doc.text,
          metadata: doc.metadata,
          score: covered / terms.size + hits / (words.length + 1) / 10,
        };
      })
      .filter((r) => r.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, topK);
  };
}
