// Knowledge bases on PostgreSQL (docs/knowledge.md): documents by content hash, chunks ranked by full-text
// search (a generated tsvector with a GIN index, ts_rank) and by exact cosine over their stored embeddings.
import { LbotError } from '../../../core/errors.js';
import type { KnowledgeFilter } from '../../../core/protocol/knowledge.js';
import type {
  AsyncKnowledgeStore,
  KbBase,
  KbBaseSummary,
  KbChunk,
  KbChunkInput,
  KbDocument,
  KbDocumentInput,
  KbNewBase,
} from '../../../core/stores/knowledge-types.js';
import { jsonObject, num, numOrNull, text, type Row } from '../../../core/stores/sqlite/columns.js';
import { BASE_COLUMNS, baseOf } from '../../../core/stores/sqlite/knowledge.js';
import { isUniqueViolation, type PgQuery, type PgStoreDb } from './connection.js';
import { pgFilterSql } from './knowledge-filters.js';

const scored = (rows: Row[]) => rows.map((r) => ({ row: num(r, 'row'), score: num(r, 'score') }));

export class PgKnowledgeStore implements AsyncKnowledgeStore {
  constructor(readonly db: PgStoreDb) {}

  async createBase(base: KbNewBase): Promise<KbBase> {
    const now = this.db.now();
    try {
      const row = await this.db.run('creating a knowledge base', (q) =>
        q.row(
          `INSERT INTO kb_bases (id, name, embedding_model, chunk_tokens, chunk_overlap, version, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, 0, $6, $6) RETURNING ${BASE_COLUMNS}`,
          [base.id, base.name, base.embedding_model, base.chunk_tokens, base.chunk_overlap, now],
        ),
      );
      if (!row) throw new LbotError('internal', `knowledge base ${base.id} vanished after it was created`);
      return baseOf(row);
    } catch (err) {
      if (isUniqueViolation(err))
        throw new LbotError('kb.exists', `knowledge base ${base.id} already exists`, { hint: `add files with \`lbot kb add ${base.id} PATH…\`` });
      throw err;
    }
  }

  async getBase(id: string): Promise<KbBase | null> {
    const row = await this.db.run('reading a knowledge base', (q) => q.row(`SELECT ${BASE_COLUMNS} FROM kb_bases WHERE id = $1`, [id]));
    return row ? baseOf(row) : null;
  }

  async listBases(): Promise<KbBaseSummary[]> {
    const rows = await this.db.run('listing knowledge bases', (q) =>
      q.rows(
        `SELECT ${BASE_COLUMNS},
           (SELECT count(*) FROM kb_documents d WHERE d.base_id = b.id)::int AS documents,
           (SELECT coalesce(sum(chunk_count), 0) FROM kb_documents d WHERE d.base_id = b.id)::int AS chunks
         FROM kb_bases b ORDER BY id`,
      ),
    );
    return rows.map((row) => ({ ...baseOf(row), documents: num(row, 'documents'), chunks: num(row, 'chunks') }));
  }

  async removeBase(id: string): Promise<boolean> {
    return (await this.db.run('removing a knowledge base', (q) => q.exec('DELETE FROM kb_bases WHERE id = $1', [id]))) > 0;
  }

  async documents(base_id: string): Promise<KbDocument[]> {
    const rows = await this.db.run('listing knowledge documents', (q) =>
      q.rows(
        'SELECT source, origin, content_hash, metadata::text AS metadata, version, bytes, chunk_count, updated_at FROM kb_documents WHERE base_id = $1 ORDER BY source',
        [base_id],
      ),
    );
    return rows.map((row) => ({
      source: text(row, 'source'),
      origin: text(row, 'origin'),
      content_hash: text(row, 'content_hash'),
      metadata: jsonObject(row, 'metadata'),
      version: num(row, 'version'),
      bytes: num(row, 'bytes'),
      chunk_count: num(row, 'chunk_count'),
      updated_at: num(row, 'updated_at'),
    }));
  }

  async putDocument(base_id: string, doc: KbDocumentInput, chunks: readonly KbChunkInput[], version: number): Promise<void> {
    const now = this.db.now();
    await this.db.write('writing a knowledge document', async (q) => {
      const dims = chunks.find((c) => c.embedding)?.embedding?.length ?? null;
      if (dims !== null) await this.#claimDims(q, base_id, dims);
      if (chunks.some((c) => c.embedding && c.embedding.length !== dims))
        throw new LbotError('kb.embedding_failed', `${doc.source}: embeddings of different lengths in one document`);
      await q.exec('DELETE FROM kb_documents WHERE base_id = $1 AND source = $2', [base_id, doc.source]);
      const inserted = await q.row(
        `INSERT INTO kb_documents (base_id, source, origin, content_hash, metadata, version, bytes, chunk_count, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $9) RETURNING id`,
        [base_id, doc.source, doc.origin, doc.content_hash, JSON.stringify(doc.metadata), version, doc.bytes, chunks.length, now],
      );
      if (!inserted) throw new LbotError('internal', `${doc.source}: the document row was not written`);
      // One INSERT for all chunks: parallel arrays unnested in order (ordinal = position).
      if (chunks.length > 0)
        await q.exec(
          `INSERT INTO kb_chunks (document_id, base_id, ordinal, text, tokens, embedding)
           SELECT $1, $2, t.ord - 1, t.text, t.tokens, t.embedding::real[]
           FROM unnest($3::text[], $4::int[], $5::text[]) WITH ORDINALITY AS t(text, tokens, embedding, ord)`,
          [
            num(inserted, 'id'),
            base_id,
            chunks.map((c) => c.text),
            chunks.map((c) => c.tokens),
            chunks.map((c) => (c.embedding ? `{${c.embedding.join(',')}}` : null)),
          ],
        );
      await q.exec('UPDATE kb_bases SET updated_at = $1 WHERE id = $2', [now, base_id]);
    });
  }

  /** The first vector fixes the base's dimensions; a model that changes length later is refused, not mixed in. */
  async #claimDims(q: PgQuery, base_id: string, dims: number): Promise<void> {
    const row = await q.row('SELECT embedding_dims FROM kb_bases WHERE id = $1 FOR UPDATE', [base_id]);
    if (!row) throw new LbotError('kb.not_found', `knowledge base ${base_id} not found`);
    const have = numOrNull(row, 'embedding_dims');
    if (have === null) await q.exec('UPDATE kb_bases SET embedding_dims = $1 WHERE id = $2', [dims, base_id]);
    else if (have !== dims)
      throw new LbotError('kb.embedding_failed', `the embedding model returned ${dims} dimensions; knowledge base ${base_id} holds ${have}`, {
        hint: `rebuild it: \`lbot kb reindex ${base_id}\``,
      });
  }

  async removeDocuments(base_id: string, sources: readonly string[]): Promise<number> {
    if (sources.length === 0) return 0;
    return this.db.run('removing knowledge documents', (q) =>
      q.exec('DELETE FROM kb_documents WHERE base_id = $1 AND source = ANY($2::text[])', [base_id, [...sources]]),
    );
  }

  async setVersion(base_id: string, version: number): Promise<void> {
    await this.db.run('recording a knowledge base version', (q) =>
      q.exec('UPDATE kb_bases SET version = $1, updated_at = $2 WHERE id = $3', [version, this.db.now(), base_id]),
    );
  }

  async resetDims(base_id: string): Promise<void> {
    await this.db.run('resetting embedding dimensions', (q) =>
      q.exec('UPDATE kb_bases SET embedding_dims = NULL WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM kb_chunks WHERE base_id = $1 AND embedding IS NOT NULL)', [
        base_id,
      ]),
    );
  }

  async searchText(
    base_id: string,
    words: readonly string[],
    filters: readonly KnowledgeFilter[],
    limit: number,
  ): Promise<Array<{ row: number; score: number }>> {
    if (words.length === 0) return [];
    // Any word may match; each word is a quoted lexeme, so nothing in it is read as a tsquery operator.
    const query = words.map((w) => `'${w.replaceAll("'", "''")}'`).join(' | ');
    const f = pgFilterSql(filters, 4);
    const rows = await this.db.run('searching a knowledge base', (q) =>
      q.rows(
        `SELECT c.id AS row, ts_rank(c.tsv, query)::float8 AS score
         FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id, to_tsquery('simple', $2) AS query
         WHERE c.base_id = $1 AND c.tsv @@ query${f.sql}
         ORDER BY score DESC, c.id LIMIT $3`,
        [base_id, query, limit, ...f.params],
      ),
    );
    return scored(rows);
  }

  async searchVector(
    base_id: string,
    vector: readonly number[],
    filters: readonly KnowledgeFilter[],
    limit: number,
  ): Promise<Array<{ row: number; score: number }>> {
    const norm = Math.sqrt(vector.reduce((s, x) => s + x * x, 0));
    if (norm === 0) return [];
    const f = pgFilterSql(filters, 5);
    // Exact cosine over every vector of the base (no approximate index: PostgreSQL has none without pgvector).
    const rows = await this.db.run('searching a knowledge base by vector', (q) =>
      q.rows(
        `SELECT c.id AS row,
           ((SELECT sum(a * b) FROM unnest(c.embedding, $2::real[]) AS t(a, b)) / nullif(sqrt((SELECT sum(a * a) FROM unnest(c.embedding) AS t(a))) * $3, 0))::float8 AS score
         FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
         WHERE c.base_id = $1 AND c.embedding IS NOT NULL AND cardinality(c.embedding) = cardinality($2::real[])${f.sql}
         ORDER BY score DESC NULLS LAST, c.id LIMIT $4`,
        [base_id, `{${vector.join(',')}}`, norm, limit, ...f.params],
      ),
    );
    return scored(rows);
  }

  async chunks(rows: readonly number[]): Promise<Map<number, KbChunk>> {
    const out = new Map<number, KbChunk>();
    if (rows.length === 0) return out;
    const found = await this.db.run('reading knowledge chunks', (q) =>
      q.rows(
        'SELECT c.id, c.ordinal, c.text, d.source, d.metadata::text AS metadata FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id WHERE c.id = ANY($1::bigint[])',
        [[...rows]],
      ),
    );
    for (const r of found) {
      const row = num(r, 'id');
      out.set(row, { row, source: text(r, 'source'), ordinal: num(r, 'ordinal'), text: text(r, 'text'), metadata: jsonObject(r, 'metadata') });
    }
    return out;
  }
}
