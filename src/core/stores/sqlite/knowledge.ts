// Knowledge bases on SQLite (docs/knowledge.md): documents by content hash, chunks in FTS5 and float32 vectors.
import { LbotError } from '../../errors.js';
import type { KnowledgeFilter } from '../../protocol/knowledge.js';
import type { KbBase, KbBaseSummary, KbChunk, KbChunkInput, KbDocument, KbDocumentInput, KbNewBase, KnowledgeStore } from '../knowledge-types.js';
import { jsonObject, jsonText, num, numOrNull, rowOrNull, rowsOf, text, textOrNull, type Row } from './columns.js';
import type { StoreDb } from './connection.js';
import { filterSql } from './knowledge-filters.js';
import { isUniqueViolation } from './store-errors.js';
import { ftsMatch } from '../../knowledge/fusion.js';
import { installVectorFunctions, signBits, vectorBlob } from './vector-functions.js';
import { VectorIndex, type IndexedVector } from './vector-index.js';

/** Chunks the sign-bit scan keeps (at least ten times the results asked for). */
const VECTOR_SCAN = 2000;
/** Of those, chunks ranked exactly after the in-memory signed-byte cosine (at least four times the results asked for). */
const VECTOR_KEEP = 100;
/** In-memory vector indexes kept across queries, all bases together (100,000 vectors of 384 dimensions take 44 MB). */
const VECTOR_CACHE_BYTES = 256 * 1024 * 1024;

/** The columns of a base row, the same on SQLite and PostgreSQL. */
export const BASE_COLUMNS = 'id, name, embedding_model, embedding_dims, chunk_tokens, chunk_overlap, version, created_at, updated_at';

export function baseOf(row: Row): KbBase {
  return {
    id: text(row, 'id'),
    name: textOrNull(row, 'name'),
    embedding_model: textOrNull(row, 'embedding_model'),
    embedding_dims: numOrNull(row, 'embedding_dims'),
    chunk_tokens: num(row, 'chunk_tokens'),
    chunk_overlap: num(row, 'chunk_overlap'),
    version: num(row, 'version'),
    created_at: num(row, 'created_at'),
    updated_at: num(row, 'updated_at'),
  };
}

/** KnowledgeStore backed by `kb_bases`, `kb_documents`, `kb_chunks` and `kb_chunks_fts`. */
export class SqliteKnowledgeStore implements KnowledgeStore {
  /** Per base: its vector index as of one generation (least recently used first), or the generation first queried. */
  readonly #vectors = new Map<string, { key: string; index: VectorIndex | null }>();

  constructor(readonly store: StoreDb) {}

  createBase(base: KbNewBase): KbBase {
    const now = this.store.now();
    try {
      this.store.write('creating a knowledge base', () =>
        this.store
          .prepare(
            'INSERT INTO kb_bases (id, name, embedding_model, chunk_tokens, chunk_overlap, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?)',
          )
          .run(base.id, base.name, base.embedding_model, base.chunk_tokens, base.chunk_overlap, now, now),
      );
    } catch (err) {
      if (isUniqueViolation(err) || (err instanceof LbotError && isUniqueViolation(err.cause)))
        throw new LbotError('kb.exists', `knowledge base ${base.id} already exists`, { hint: `add files with \`lbot kb add ${base.id} PATH…\`` });
      throw err;
    }
    const created = this.getBase(base.id);
    if (!created) throw new LbotError('internal', `knowledge base ${base.id} vanished after it was created`);
    return created;
  }

  getBase(id: string): KbBase | null {
    return this.store.run('reading a knowledge base', () => {
      const row = rowOrNull(this.store.prepare(`SELECT ${BASE_COLUMNS} FROM kb_bases WHERE id = ?`).get(id));
      return row ? baseOf(row) : null;
    });
  }

  listBases(): KbBaseSummary[] {
    return this.store.run('listing knowledge bases', () =>
      rowsOf(
        this.store
          .prepare(
            `SELECT ${BASE_COLUMNS},
               (SELECT count(*) FROM kb_documents d WHERE d.base_id = b.id) AS documents,
               (SELECT coalesce(sum(chunk_count), 0) FROM kb_documents d WHERE d.base_id = b.id) AS chunks
             FROM kb_bases b ORDER BY id`,
          )
          .all(),
      ).map((row) => ({ ...baseOf(row), documents: num(row, 'documents'), chunks: num(row, 'chunks') })),
    );
  }

  removeBase(id: string): boolean {
    return this.store.write('removing a knowledge base', () => this.store.prepare('DELETE FROM kb_bases WHERE id = ?').run(id).changes > 0);
  }

  documents(base_id: string): KbDocument[] {
    return this.store.run('listing knowledge documents', () =>
      rowsOf(
        this.store
          .prepare(
            'SELECT source, origin, content_hash, metadata_json, version, bytes, chunk_count, updated_at FROM kb_documents WHERE base_id = ? ORDER BY source',
          )
          .all(base_id),
      ).map((row) => ({
        source: text(row, 'source'),
        origin: text(row, 'origin'),
        content_hash: text(row, 'content_hash'),
        metadata: jsonObject(row, 'metadata_json'),
        version: num(row, 'version'),
        bytes: num(row, 'bytes'),
        chunk_count: num(row, 'chunk_count'),
        updated_at: num(row, 'updated_at'),
      })),
    );
  }

  putDocument(base_id: string, doc: KbDocumentInput, chunks: readonly KbChunkInput[], version: number): void {
    const now = this.store.now();
    this.store.write('writing a knowledge document', () => {
      const dims = chunks.find((c) => c.embedding)?.embedding?.length ?? null;
      if (dims !== null) this.#claimDims(base_id, dims);
      this.store.prepare('DELETE FROM kb_documents WHERE base_id = ? AND source = ?').run(base_id, doc.source);
      const inserted = this.store
        .prepare(
          `INSERT INTO kb_documents (base_id, source, origin, content_hash, metadata_json, version, bytes, chunk_count, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(base_id, doc.source, doc.origin, doc.content_hash, jsonText(doc.metadata), version, doc.bytes, chunks.length, now, now);
      const insertChunk = this.store.prepare('INSERT INTO kb_chunks (document_id, base_id, ordinal, text, tokens, embedding) VALUES (?, ?, ?, ?, ?, ?)');
      const insertBits = this.store.prepare('INSERT INTO kb_chunk_bits (chunk_id, base_id, bits) VALUES (?, ?, ?)');
      chunks.forEach((c, ordinal) => {
        if (c.embedding && c.embedding.length !== dims)
          throw new LbotError('kb.embedding_failed', `${doc.source}: embeddings of different lengths in one document`);
        const blob = c.embedding ? vectorBlob(c.embedding) : null;
        const chunk = insertChunk.run(inserted.lastInsertRowid, base_id, ordinal, c.text, c.tokens, blob);
        if (blob) insertBits.run(chunk.lastInsertRowid, base_id, signBits(blob));
      });
      this.store.prepare('UPDATE kb_bases SET updated_at = ?, generation = generation + 1 WHERE id = ?').run(now, base_id);
    });
  }

  /** The first vector fixes the base's dimensions; a model that changes length later is refused, not mixed in. */
  #claimDims(base_id: string, dims: number): void {
    const row = rowOrNull(this.store.prepare('SELECT embedding_dims FROM kb_bases WHERE id = ?').get(base_id));
    if (!row) throw new LbotError('kb.not_found', `knowledge base ${base_id} not found`);
    const have = numOrNull(row, 'embedding_dims');
    if (have === null) this.store.prepare('UPDATE kb_bases SET embedding_dims = ? WHERE id = ?').run(dims, base_id);
    else if (have !== dims)
      throw new LbotError('kb.embedding_failed', `the embedding model returned ${dims} dimensions; knowledge base ${base_id} holds ${have}`, {
        hint: `rebuild it: \`lbot kb reindex ${base_id}\``,
      });
  }

  removeDocuments(base_id: string, sources: readonly string[]): number {
    if (sources.length === 0) return 0;
    return this.store.write('removing knowledge documents', () => {
      const del = this.store.prepare('DELETE FROM kb_documents WHERE base_id = ? AND source = ?');
      const removed = sources.reduce((n, s) => n + del.run(base_id, s).changes, 0);
      if (removed > 0) this.store.prepare('UPDATE kb_bases SET generation = generation + 1 WHERE id = ?').run(base_id);
      return removed;
    });
  }

  setVersion(base_id: string, version: number): void {
    this.store.write('recording a knowledge base version', () =>
      this.store.prepare('UPDATE kb_bases SET version = ?, updated_at = ? WHERE id = ?').run(version, this.store.now(), base_id),
    );
  }

  resetDims(base_id: string): void {
    this.store.write('resetting embedding dimensions', () =>
      this.store
        .prepare('UPDATE kb_bases SET embedding_dims = NULL WHERE id = ? AND NOT EXISTS (SELECT 1 FROM kb_chunks WHERE base_id = ? AND embedding IS NOT NULL)')
        .run(base_id, base_id),
    );
  }

  searchText(base_id: string, words: readonly string[], filters: readonly KnowledgeFilter[], limit: number): Array<{ row: number; score: number }> {
    const match = ftsMatch(words);
    if (match === null) return [];
    // FTS5 ranks fastest on its own index with no join, and fastest of all with a LIMIT (a bounded sort instead of
    // sorting every match): the best matches come from it a window at a time, each window four times the one
    // before, and are checked for the base and the filters until `limit` pass (a join would look up every match's
    // row first). When the matches belong to the queried base, the first window is the only one.
    const f = filterSql(filters);
    const join = filters.length ? ' JOIN kb_documents d ON d.id = c.document_id' : '';
    // `bm25()` sorted by SQLite, not FTS5's `rank` column: ORDER BY rank makes FTS5 run a nested query of its own,
    // about 1.6 times slower for the same order.
    const ranked = this.store.prepare(
      'SELECT rowid AS row, bm25(kb_chunks_fts) AS bm25 FROM kb_chunks_fts WHERE kb_chunks_fts MATCH ? ORDER BY bm25 LIMIT ? OFFSET ?',
    );
    const check = this.store.prepare(`SELECT c.id AS row FROM kb_chunks c${join} WHERE c.id IN (SELECT value FROM json_each(?)) AND c.base_id = ?${f.sql}`);
    return this.store.run('searching a knowledge base', () => {
      const out: Array<{ row: number; score: number }> = [];
      let offset = 0;
      for (let window = Math.max(64, limit * 4); out.length < limit; offset += window, window *= 4) {
        const batch = rowsOf(ranked.all(match, window, offset)).map((r) => ({ row: num(r, 'row'), score: -num(r, 'bm25') }));
        if (batch.length === 0) break;
        const kept = new Set(rowsOf(check.all(JSON.stringify(batch.map((b) => b.row)), base_id, ...f.params)).map((r) => num(r, 'row')));
        for (const b of batch) if (kept.has(b.row) && out.length < limit) out.push(b);
        if (batch.length < window) break;
      }
      return out;
    });
  }

  searchVector(base_id: string, vector: readonly number[], filters: readonly KnowledgeFilter[], limit: number): Array<{ row: number; score: number }> {
    const blob = vectorBlob(vector);
    const exact = (candidates: string | null) => {
      const f = filterSql(filters);
      const join = filters.length ? ' JOIN kb_documents d ON d.id = c.document_id' : '';
      // `+c.base_id`: the candidates are looked up by rowid, not through the base's index.
      const among = candidates === null ? '' : ' AND c.id IN (SELECT value FROM json_each(?))';
      const sql = `SELECT c.id AS row, vec_distance_cosine(c.embedding, ?) AS distance FROM kb_chunks c${join}
        WHERE ${candidates === null ? '' : '+'}c.base_id = ? AND c.embedding IS NOT NULL AND length(c.embedding) = ?${among}${f.sql} ORDER BY distance LIMIT ?`;
      const params = [blob, base_id, blob.length, ...(candidates === null ? [] : [candidates]), ...f.params, limit];
      return rowsOf(this.store.prepare(sql).all(...params)).map((r) => ({ row: num(r, 'row'), score: 1 - num(r, 'distance') }));
    };
    return this.store.run('searching a knowledge base by vector', () => {
      installVectorFunctions(this.store.db);
      // A filter may pass few chunks: those are ranked exactly. Otherwise the compact sign bits are scanned by
      // Hamming distance for candidates, which exact cosine then ranks (exact outright on a base this small).
      if (filters.length) return exact(null);
      const bits = signBits(blob);
      const scan = Math.max(VECTOR_SCAN, limit * 10);
      const index = this.#vectorIndex(base_id, vector.length);
      if (index === 'gone') return [];
      if (index) return exact(JSON.stringify(index.nearest(blob, bits, scan, Math.max(VECTOR_KEEP, limit * 4))));
      const candidates = rowsOf(
        this.store
          .prepare(
            'SELECT chunk_id AS row FROM kb_chunk_bits WHERE base_id = ? AND length(bits) = ? ORDER BY vec_distance_hamming(vec_bit(bits), vec_bit(?)) LIMIT ?',
          )
          .all(base_id, bits.length, bits, scan),
      ).map((r) => num(r, 'row'));
      return exact(JSON.stringify(candidates));
    });
  }

  /**
   * The base's in-memory vector index for `dims` dimensions, built on the second query of a generation of the base
   * (a process that asks once, such as `lbot kb search`, never pays for it) and kept while the generation lasts;
   * null before that, `gone` when the base is. The index only chooses which chunks exact cosine ranks, so a copy
   * that lags a write by another process costs recall, never a wrong or deleted result.
   */
  #vectorIndex(base_id: string, dims: number): VectorIndex | null | 'gone' {
    const row = rowOrNull(this.store.prepare('SELECT created_at, generation FROM kb_bases WHERE id = ?').get(base_id));
    if (!row) {
      this.#vectors.delete(base_id);
      return 'gone';
    }
    const key = `${num(row, 'created_at')}:${num(row, 'generation')}:${dims}`;
    const held = this.#vectors.get(base_id);
    this.#vectors.delete(base_id);
    if (held?.key === key && held.index) {
      this.#vectors.set(base_id, held);
      return held.index;
    }
    if (held?.key !== key) {
      this.#vectors.set(base_id, { key, index: null });
      return null;
    }
    const where = 'FROM kb_chunk_bits b JOIN kb_chunks c ON c.id = b.chunk_id WHERE b.base_id = ? AND length(b.bits) = ? AND length(c.embedding) = ?';
    const params = [base_id, Math.ceil(dims / 8), dims * 4];
    const counted = rowOrNull(this.store.prepare(`SELECT count(*) AS n ${where}`).get(...params));
    const stmt = this.store.prepare(`SELECT b.chunk_id AS id, b.bits, c.embedding ${where}`);
    const rows = function* (): Generator<IndexedVector> {
      for (const r of stmt.iterate(...params)) {
        const [v] = rowsOf([r]);
        const bits = v?.bits;
        const embedding = v?.embedding;
        if (v && Buffer.isBuffer(bits) && Buffer.isBuffer(embedding)) yield { id: num(v, 'id'), bits, embedding };
      }
    };
    const index = VectorIndex.build(rows(), counted ? num(counted, 'n') : 0, dims);
    this.#vectors.set(base_id, { key, index });
    let total = 0;
    for (const h of this.#vectors.values()) total += h.index?.bytes ?? 0;
    for (const [id, h] of this.#vectors) {
      if (total <= VECTOR_CACHE_BYTES || id === base_id) break;
      this.#vectors.delete(id);
      total -= h.index?.bytes ?? 0;
    }
    return index;
  }

  chunks(rows: readonly number[]): Map<number, KbChunk> {
    const out = new Map<number, KbChunk>();
    if (rows.length === 0) return out;
    const sql = `SELECT c.id, c.ordinal, c.text, d.source, d.metadata_json FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
      WHERE c.id IN (${rows.map(() => '?').join(', ')})`;
    this.store.run('reading knowledge chunks', () => {
      for (const r of rowsOf(this.store.prepare(sql).all(...rows))) {
        const row = num(r, 'id');
        out.set(row, { row, source: text(r, 'source'), ordinal: num(r, 'ordinal'), text: text(r, 'text'), metadata: jsonObject(r, 'metadata_json') });
      }
    });
    return out;
  }
}
