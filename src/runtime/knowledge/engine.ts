// The knowledge engine behind `knowledge.retrieve` and `lbot kb search`: BM25 over FTS5, cosine over the base's
// vectors when it has an embedding model, reciprocal rank fusion of both, optional rerank (docs/knowledge.md).
import type { KnowledgeBaseConfig } from '../../core/config.js';
import { LbotError } from '../../core/errors.js';
import { queryWords, reciprocalRankFusion } from '../../core/knowledge/fusion.js';
import type { KnowledgePort, KnowledgeQuery, ModelProvider } from '../../core/host/ports.js';
import type { KnowledgeBaseInfo, RetrievalEntry } from '../../core/protocol/knowledge.js';
import type { AsyncKnowledgeStore, KbBase } from '../../core/stores/knowledge-types.js';
import { rankConfigDocuments } from './local.js';

/** Candidates each ranking contributes before fusion: enough for the fused top_k to be stable. */
const candidatesFor = (topK: number) => Math.min(200, Math.max(20, topK * 4));

/** At most this many candidates go to a rerank model in one call (models.rerank's cap). */
export const RERANK_MAX = 64;

export type KnowledgeEngineDeps = {
  store: AsyncKnowledgeStore;
  models: ModelProvider;
  /** Bases listed in lbot.config.json (documents inline); a stored base of the same id wins. */
  configBases: readonly KnowledgeBaseConfig[];
};

/** How a ranked result was found, for `lbot kb search` and the docs. */
export type RetrievalMode = 'bm25' | 'vector' | 'hybrid';

export type KnowledgeEngine = KnowledgePort & {
  /** Which rankings a query on this base runs. */
  modeOf(kb_id: string): Promise<RetrievalMode>;
};

/** The stored base's ranked chunk rows: BM25 and vector lists fused, or whichever one there is. */
async function rankRows(deps: KnowledgeEngineDeps, base: KbBase, q: KnowledgeQuery): Promise<Array<{ row: number; score: number }>> {
  const limit = candidatesFor(q.top_k);
  const words = queryWords(q.query);
  const fused = Boolean(base.embedding_model && q.query.trim());
  // BM25 alone needs only the rows that are returned (or reranked); fusion wants deeper lists.
  const textLimit = fused ? limit : q.rerank_model_id ? Math.max(q.top_k, RERANK_MAX) : q.top_k;
  const text = words.length ? await deps.store.searchText(base.id, words, q.filters, textLimit) : [];
  if (!base.embedding_model || !fused) return text;
  const embedded = await deps.models.embed({ model_id: base.embedding_model, input: [q.query], deadline_at: q.deadline_at, signal: q.signal });
  const vector = embedded.embeddings[0];
  if (!vector || vector.length === 0 || !vector.every(Number.isFinite))
    throw new LbotError('kb.embedding_failed', `embedding model ${base.embedding_model} returned no usable vector for the query`);
  const near = await deps.store.searchVector(base.id, vector, q.filters, limit);
  if (text.length === 0) return near;
  return reciprocalRankFusion([text.map((t) => t.row), near.map((n) => n.row)]).map((f) => ({ row: f.id, score: f.score }));
}

/** Reorders candidates by a rerank model's relevance; entries it does not score keep their order after the scored ones. */
async function rerank(models: ModelProvider, q: KnowledgeQuery, model_id: string, entries: RetrievalEntry[]): Promise<RetrievalEntry[]> {
  const head = entries.slice(0, RERANK_MAX);
  const scored = await models.rerank({
    model_id,
    query: q.query,
    documents: head.map((e) => e.text),
    top_n: null,
    deadline_at: q.deadline_at,
    signal: q.signal,
  });
  const seen = new Set<number>();
  const out: RetrievalEntry[] = [];
  for (const r of [...scored].sort((a, b) => b.relevance_score - a.relevance_score)) {
    const e = Number.isInteger(r.index) ? head[r.index] : undefined;
    if (!e || seen.has(r.index) || !Number.isFinite(r.relevance_score)) continue;
    seen.add(r.index);
    out.push({ ...e, score: r.relevance_score });
  }
  return [...out, ...head.filter((_, i) => !seen.has(i))];
}

export function createKnowledgeEngine(deps: KnowledgeEngineDeps): KnowledgeEngine {
  const configBase = (id: string) => deps.configBases.find((b) => b.id === id);
  return {
    async list() {
      const stored = await deps.store.listBases();
      const ids = new Set(stored.map((b) => b.id));
      const fromStore: KnowledgeBaseInfo[] = stored.map((b) => ({
        kb_id: b.id,
        kb_name: b.name,
        kb_type: b.embedding_model ? 'hybrid' : 'bm25',
        origin: 'store',
        embedding_model: b.embedding_model,
        documents: b.documents,
        chunks: b.chunks,
        version: b.version,
      }));
      const fromConfig: KnowledgeBaseInfo[] = deps.configBases
        .filter((b) => !ids.has(b.id))
        .map((b) => ({
          kb_id: b.id,
          kb_name: b.name,
          kb_type: b.kb_type,
          origin: 'config',
          embedding_model: null,
          documents: b.documents.length,
          chunks: b.documents.length,
          version: 0,
        }));
      return [...fromStore, ...fromConfig];
    },
    async modeOf(kb_id) {
      return (await deps.store.getBase(kb_id))?.embedding_model ? 'hybrid' : 'bm25';
    },
    async retrieve(kb_id, q) {
      const base = await deps.store.getBase(kb_id);
      if (!base) {
        const cfg = configBase(kb_id);
        if (!cfg) throw new LbotError('kb.not_found', `knowledge base ${kb_id} not found`, { hint: 'list them with `lbot kb list`' });
        const ranked = rankConfigDocuments(cfg, q.query, q.rerank_model_id ? RERANK_MAX : q.top_k, q.filters);
        return (q.rerank_model_id ? await rerank(deps.models, q, q.rerank_model_id, ranked) : ranked).slice(0, q.top_k);
      }
      const rows = await rankRows(deps, base, q);
      const wanted = rows.slice(0, q.rerank_model_id ? Math.max(q.top_k, RERANK_MAX) : q.top_k);
      const chunks = await deps.store.chunks(wanted.map((r) => r.row));
      const entries: RetrievalEntry[] = [];
      for (const r of wanted) {
        const c = chunks.get(r.row);
        if (!c) continue;
        entries.push({
          kb_id,
          document_id: c.source,
          chunk_id: `${c.source}#${c.ordinal}`,
          score: r.score,
          text: c.text,
          content: c.text,
          metadata: { ...c.metadata, chunk: c.ordinal },
        });
      }
      return (q.rerank_model_id ? await rerank(deps.models, q, q.rerank_model_id, entries) : entries).slice(0, q.top_k);
    },
  };
}
