// The knowledge store on a real lbot.db: documents replaced atomically, BM25 and vector search, filters, cascade.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import { queryWords } from '../../../src/core/knowledge/fusion.js';
import { openSqliteStores, type SqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { MIGRATIONS } from '../../../src/core/stores/sqlite/migrations.js';
import { cosineDistance, hammingDistance, installVectorFunctions, signBits, vectorBlob } from '../../../src/core/stores/sqlite/vector-functions.js';
import { openTempStores } from '../stores/temp-data-dir.js';

let stores: SqliteStores | undefined;
afterEach(() => stores?.close());

const doc = (source: string, metadata: Record<string, unknown> = {}) => ({
  source,
  origin: `/abs/${source}`,
  content_hash: `h-${source}`,
  metadata,
  bytes: 10,
});

function seeded(): SqliteStores['knowledge'] {
  stores = openTempStores();
  const kb = stores.knowledge;
  kb.createBase({ id: 'docs', name: 'Docs', embedding_model: 'emb', chunk_tokens: 100, chunk_overlap: 10 });
  kb.putDocument(
    'docs',
    doc('a.md', { type: 'markdown' }),
    [
      { text: 'the lighthouse keeper trims the lamp', tokens: 6, embedding: [1, 0, 0] },
      { text: 'tides rise twice a day', tokens: 5, embedding: [0, 1, 0] },
    ],
    1,
  );
  kb.putDocument('docs', doc('b.txt', { type: 'text' }), [{ text: 'a keeper of bees', tokens: 4, embedding: [0.9, 0.1, 0] }], 1);
  return kb;
}

describe('knowledge store', () => {
  it('creates a base once (kb.exists on the second), lists it with counts, removes it with its chunks', () => {
    const kb = seeded();
    expect(() => kb.createBase({ id: 'docs', name: null, embedding_model: null, chunk_tokens: 1, chunk_overlap: 0 })).toThrow(
      expect.objectContaining({ code: 'kb.exists' }) as LbotError,
    );
    expect(kb.listBases()).toEqual([expect.objectContaining({ id: 'docs', documents: 2, chunks: 3, embedding_dims: 3 })]);
    expect(kb.removeBase('docs')).toBe(true);
    const db = new Database(stores?.dbFile ?? '');
    expect(db.prepare('SELECT count(*) AS n FROM kb_chunks').get()).toEqual({ n: 0 });
    expect(db.prepare("SELECT count(*) AS n FROM kb_chunks_fts WHERE kb_chunks_fts MATCH 'keeper'").get()).toEqual({ n: 0 });
    db.close();
  });

  it('ranks by BM25, filters on metadata, and replaces a document with its chunks in one step', () => {
    const kb = seeded();
    const hits = kb.searchText('docs', queryWords('keeper lamp'), [], 10);
    const texts = [...kb.chunks(hits.map((h) => h.row)).values()];
    expect(hits).toHaveLength(2);
    expect(texts.find((c) => c.row === hits[0]?.row)?.text).toContain('lamp');
    expect(kb.searchText('docs', queryWords('keeper'), [{ field: 'type', operator: 'eq', value: 'text' }], 10)).toHaveLength(1);

    kb.putDocument('docs', doc('a.md', { type: 'markdown' }), [{ text: 'rewritten without the old words', tokens: 5, embedding: [0, 0, 1] }], 2);
    expect(kb.searchText('docs', queryWords('lighthouse'), [], 10)).toEqual([]);
    expect(kb.documents('docs').map((d) => [d.source, d.version, d.chunk_count])).toEqual([
      ['a.md', 2, 1],
      ['b.txt', 1, 1],
    ]);
  });

  it('finds the nearest vectors, and refuses vectors of another length than the base holds', () => {
    const kb = seeded();
    const near = kb.searchVector('docs', [1, 0.05, 0], [], 2);
    expect([...kb.chunks(near.map((n) => n.row)).values()].map((c) => c.text).sort()).toEqual(['a keeper of bees', 'the lighthouse keeper trims the lamp']);
    expect(near[0]?.score).toBeGreaterThan(0.99);
    expect(() => kb.putDocument('docs', doc('c.md'), [{ text: 'x', tokens: 1, embedding: [1, 2] }], 2)).toThrow(
      expect.objectContaining({ code: 'kb.embedding_failed' }) as LbotError,
    );
    // the refused document left nothing behind
    expect(kb.documents('docs').map((d) => d.source)).toEqual(['a.md', 'b.txt']);
  });

  it('answers vector distance the same with sqlite-vec and with the JavaScript fallback', () => {
    const a = vectorBlob([1, 2, 3]);
    const b = vectorBlob([3, 2, 1]);
    const native = new Database(':memory:');
    expect(installVectorFunctions(native)).toBe('sqlite-vec');
    const viaNative = (native.prepare('SELECT vec_distance_cosine(?, ?) AS d').get(a, b) as { d: number }).d;
    native.close();
    expect(cosineDistance(a, b)).toBeCloseTo(viaNative, 5);
    expect(cosineDistance(a, vectorBlob([1]))).toBeNull();
  });

  it('loads the vector functions on the first vector search, not when the database opens', () => {
    const kb = seeded();
    const db = kb.store.db;
    expect(() => db.prepare('SELECT vec_version()')).toThrow(/no such function/);
    expect(kb.searchVector('docs', [1, 0, 0], [], 2).map((h) => Math.round(h.score * 100))).toEqual([100, 99]);
    expect(db.prepare('SELECT vec_version() AS v').get()).toEqual({ v: expect.stringMatching(/^v\d/) });
    // Once per connection: a second search finds them installed.
    expect(installVectorFunctions(db)).toBe('sqlite-vec');
  });

  it('reopens an existing data dir with the knowledge tables migrated once', () => {
    seeded();
    const dir = stores?.dataDir ?? '';
    const again = openSqliteStores(dir);
    expect(again.knowledge.listBases().map((b) => b.id)).toEqual(['docs']);
    again.close();
  });

  it("BM25 finds a base's matches and filtered ones behind many better matches of another base", () => {
    const kb = seeded();
    kb.createBase({ id: 'noise', name: null, embedding_model: null, chunk_tokens: 100, chunk_overlap: 0 });
    // 300 chunks that rank above every match in `docs` (the word repeated), spread over many batches.
    const noisy = Array.from({ length: 300 }, () => ({ text: 'keeper keeper keeper', tokens: 3, embedding: null }));
    kb.putDocument('noise', doc('n.md', { type: 'markdown' }), noisy, 1);
    const hits = kb.searchText('docs', queryWords('keeper'), [], 10);
    expect([...kb.chunks(hits.map((h) => h.row)).values()].map((c) => c.source).sort()).toEqual(['a.md', 'b.txt']);
    const filtered = kb.searchText('docs', queryWords('keeper'), [{ field: 'type', operator: 'eq', value: 'text' }], 10);
    expect([...kb.chunks(filtered.map((h) => h.row)).values()].map((c) => c.source)).toEqual(['b.txt']);
    expect(kb.searchText('noise', queryWords('keeper'), [], 5)).toHaveLength(5);
    // best first
    const scores = kb.searchText('noise', queryWords('keeper'), [], 100).map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('keeps one sign-bit row per stored vector, and Hamming distance agrees between sqlite-vec and JavaScript', () => {
    const kb = seeded();
    kb.putDocument('docs', doc('a.md'), [{ text: 'only one now', tokens: 3, embedding: [0, 0, 1] }], 2);
    const db = new Database(stores?.dbFile ?? '', { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM kb_chunk_bits').get()).toEqual({ n: 2 });
    db.close();
    kb.removeBase('docs');
    const after = new Database(stores?.dbFile ?? '', { readonly: true });
    expect(after.prepare('SELECT count(*) AS n FROM kb_chunk_bits').get()).toEqual({ n: 0 });
    after.close();

    const a = signBits(vectorBlob([1, -1, 2, -2, 0, 3, 3, 3, -1]));
    const b = signBits(vectorBlob([-1, -1, 2, 2, 0, 3, -3, 3, 1]));
    expect([...a]).toEqual([0b11100101, 0]);
    const native = new Database(':memory:');
    installVectorFunctions(native);
    const viaNative = (native.prepare('SELECT vec_distance_hamming(vec_bit(?), vec_bit(?)) AS d').get(a, b) as { d: number }).d;
    native.close();
    expect(hammingDistance(a, b)).toBe(viaNative);
    expect(viaNative).toBe(4);
  });

  it('migration 7 gives vectors stored before it their sign bits', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-kb-m7-'));
    try {
      const db = new Database(path.join(dir, 'lbot.db'));
      for (const m of MIGRATIONS) if (m.version <= 6) db.exec(m.sql ?? '');
      db.pragma('user_version = 6');
      db.prepare("INSERT INTO kb_bases (id, embedding_model, chunk_tokens, chunk_overlap, created_at, updated_at) VALUES ('old', 'emb', 10, 0, 0, 0)").run();
      db.prepare(
        "INSERT INTO kb_documents (id, base_id, source, origin, content_hash, metadata_json, version, bytes, chunk_count, created_at, updated_at) VALUES (1, 'old', 's.md', '/s.md', 'h', '{}', 1, 1, 2, 0, 0)",
      ).run();
      const chunk = db.prepare("INSERT INTO kb_chunks (document_id, base_id, ordinal, text, tokens, embedding) VALUES (1, 'old', ?, ?, 1, ?)");
      chunk.run(0, 'north', vectorBlob([1, 0, 0]));
      chunk.run(1, 'south', vectorBlob([-1, 0, 0]));
      db.close();
      stores = openSqliteStores(dir);
      const near = stores.knowledge.searchVector('old', [-0.9, 0.1, 0], [], 1);
      expect([...stores.knowledge.chunks(near.map((n) => n.row)).values()].map((c) => c.text)).toEqual(['south']);
    } finally {
      stores?.close();
      stores = undefined;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ranks vectors the same before and after it holds them in memory, and sees writes of another connection', () => {
    stores = openTempStores();
    const kb = stores.knowledge;
    kb.createBase({ id: 'v', name: null, embedding_model: 'emb', chunk_tokens: 100, chunk_overlap: 0 });
    let seed = 42;
    const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
    const vectors = Array.from({ length: 600 }, () => Array.from({ length: 24 }, rand));
    for (let d = 0; d < 6; d++)
      kb.putDocument(
        'v',
        doc(`d${d}.md`, { type: 't' }),
        vectors.slice(d * 100, (d + 1) * 100).map((embedding, i) => ({ text: `chunk ${d}/${i}`, tokens: 2, embedding })),
        1,
      );
    const query = Array.from({ length: 24 }, rand);
    const exactTop = (n: number) =>
      [...kb.chunks(kb.searchVector('v', query, [{ field: 'type', operator: 'eq', value: 't' }], n).map((h) => h.row)).values()].map((c) => c.text).sort();
    const texts = () => [...kb.chunks(kb.searchVector('v', query, [], 5).map((h) => h.row)).values()].map((c) => c.text).sort();
    // A filtered search ranks every chunk exactly: the reference. The first unfiltered query scans the sign bits in
    // SQL, the second builds the in-memory index, the third uses it.
    const want = exactTop(5);
    expect(texts()).toEqual(want);
    expect(texts()).toEqual(want);
    expect(texts()).toEqual(want);

    // A write through another connection (another process's `kb add`) moves the base's generation on.
    const other = openSqliteStores(path.dirname(stores.dbFile));
    try {
      other.knowledge.putDocument('v', doc('exact.md'), [{ text: 'the query itself', tokens: 3, embedding: query }], 1);
      expect(texts()).toContain('the query itself');
      expect(texts()).toContain('the query itself');
      other.knowledge.removeDocuments('v', ['exact.md']);
    } finally {
      other.close();
    }
    expect(texts()).toEqual(want);
    expect(texts()).toEqual(want);
  });
});
