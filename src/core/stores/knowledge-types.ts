// The knowledge store's port: bases, documents tracked by content hash, chunks searched by BM25 and by vector.
import type { KnowledgeFilter } from '../protocol/knowledge.js';
import type { JsonObject } from '../protocol/event.js';

export type KbBase = {
  id: string;
  name: string | null;
  embedding_model: string | null;
  /** Set by the first embedded chunk; every later vector must have the same length. */
  embedding_dims: number | null;
  chunk_tokens: number;
  chunk_overlap: number;
  /** Completed ingestions; a document's `version` is the base version that wrote it. */
  version: number;
  created_at: number;
  updated_at: number;
};

export type KbBaseSummary = KbBase & { documents: number; chunks: number };

export type KbDocument = {
  source: string;
  /** The absolute path the document was read from. */
  origin: string;
  content_hash: string;
  metadata: JsonObject;
  version: number;
  bytes: number;
  chunk_count: number;
  updated_at: number;
};

export type KbChunkInput = { text: string; tokens: number; embedding: readonly number[] | null };

/** A chunk as retrieval returns it. */
export type KbChunk = { row: number; source: string; ordinal: number; text: string; metadata: JsonObject };

export type KbNewBase = Pick<KbBase, 'id' | 'name' | 'embedding_model' | 'chunk_tokens' | 'chunk_overlap'>;

export type KbDocumentInput = Pick<KbDocument, 'source' | 'origin' | 'content_hash' | 'metadata' | 'bytes'>;

export interface KnowledgeStore {
  /** Creates a base; `kb.exists` when the id is taken. */
  createBase(base: KbNewBase): KbBase;
  getBase(id: string): KbBase | null;
  listBases(): KbBaseSummary[];
  /** Removes a base with its documents and chunks; false when there was none. */
  removeBase(id: string): boolean;
  documents(base_id: string): KbDocument[];
  /** Replaces one document and all its chunks in one transaction, so a reader sees the old or the new, never a mix. */
  putDocument(base_id: string, doc: KbDocumentInput, chunks: readonly KbChunkInput[], version: number): void;
  removeDocuments(base_id: string, sources: readonly string[]): number;
  /** Records a completed ingestion: the base's version becomes `version`. */
  setVersion(base_id: string, version: number): void;
  /** Clears the stored dimensions once no vector is left (a rebuild with another model starts afresh). */
  resetDims(base_id: string): void;
  /** Best full-text matches of any of `words` (ids, best first; SQLite: score = −bm25 over FTS5, PostgreSQL: ts_rank). */
  searchText(base_id: string, words: readonly string[], filters: readonly KnowledgeFilter[], limit: number): Array<{ row: number; score: number }>;
  /** Nearest chunks by cosine distance (score = 1 − distance). */
  searchVector(base_id: string, vector: readonly number[], filters: readonly KnowledgeFilter[], limit: number): Array<{ row: number; score: number }>;
  chunks(rows: readonly number[]): Map<number, KbChunk>;
}

/** The store as every backend offers it to the engine and `lbot kb` (SQLite wraps its synchronous calls). */
export type AsyncKnowledgeStore = { [K in keyof KnowledgeStore]: (...args: Parameters<KnowledgeStore[K]>) => Promise<Awaited<ReturnType<KnowledgeStore[K]>>> };
