// Knowledge-base benchmark (issue 15): ingestion rate and retrieval latency at 100,000 chunks.
// Run after `npm run build`: `node bench/kb.mjs` (LBOT_BENCH_KB_CHUNKS overrides the chunk count,
// LBOT_BENCH_KB_DIMS the vector length, 384 by default as small embedding models return).
//
// 1. Ingestion: the real `lbot kb add` pipeline (walk, hash, extract, chunk with the o200k tokenizer, store)
//    over a generated Markdown tree, without embeddings: chunks/s.
// 2. The base is then filled to 100,000 chunks with generated text and vectors (one transaction per document)
//    and queried through the knowledge engine behind `knowledge.retrieve` / `lbot kb search`: BM25 (the base
//    without an embedding model) and hybrid (BM25 + cosine, reciprocal rank fusion). The query embedding is
//    precomputed, so the figures are lbot's retrieval, not a model's latency.
// 3. Floors, measured in the same run on the same database through a second connection: a direct FTS5 query
//    (MATCH … ORDER BY rank LIMIT) and a direct FTS5 query plus a direct sqlite-vec scan.
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { load as loadSqliteVec } from 'sqlite-vec';
import { ftsQuery } from '../dist/core/knowledge/fusion.js';
import { SqliteKnowledgeStore } from '../dist/core/stores/sqlite/knowledge.js';
import { openSqliteStores } from '../dist/core/stores/sqlite/open.js';
import { asAsyncKnowledge } from '../dist/core/stores/async.js';
import { vectorBlob } from '../dist/core/stores/sqlite/vector-functions.js';
import { createKnowledgeEngine } from '../dist/runtime/knowledge/engine.js';
import { chunkTokenizer, ingest } from '../dist/runtime/knowledge/ingest.js';
import { figure, fmt, percentile, prng, ratio, report } from './stats.mjs';

const CHUNKS = Number(process.env.LBOT_BENCH_KB_CHUNKS ?? 100_000);
const DIMS = Number(process.env.LBOT_BENCH_KB_DIMS ?? 384);
const INGEST_FILES = 200;
const CHUNKS_PER_DOC = 100;
const QUERIES = 120;
const ROUNDS = 3;
const TOP_K = 10;
const TARGETS = { bm25_p50_ms: 10, hybrid_p50_ms: 30 };

/** Pronounceable pseudo-words; picked with a skewed (Zipf-like) frequency, as in real text. */
function vocabulary(rand, size) {
  const syl = ['ka', 'lo', 'mi', 're', 'tu', 'sa', 'ne', 'po', 'di', 'ga', 'ver', 'shi', 'an', 'or', 'el', 'ix', 'um', 'ber', 'co', 'ta'];
  const words = new Set(['deploy', 'release', 'rollback', 'server', 'config', 'token', 'message', 'error', 'cache', 'build']);
  while (words.size < size) {
    let w = '';
    const n = 2 + Math.floor(rand() * 3);
    for (let i = 0; i < n; i++) w += syl[Math.floor(rand() * syl.length)];
    words.add(w);
  }
  return [...words];
}

const words = vocabulary(prng(7), 5000);
const zipfWord = (rand) => words[Math.floor(words.length * rand() ** 3)];
const sentence = (rand, n) => Array.from({ length: n }, () => zipfWord(rand)).join(' ') + '.';
/** About 120 tokens of text: a chunk's worth at the default budget. */
const paragraph = (rand) => Array.from({ length: 6 }, () => sentence(rand, 8 + Math.floor(rand() * 8))).join(' ');

function vector(rand) {
  const v = new Array(DIMS);
  for (let i = 0; i < DIMS; i++) v[i] = rand() * 2 - 1;
  return v;
}

const noModels = {
  embed() {
    throw new Error('no embedding model in the ingestion bench');
  },
  rerank() {
    throw new Error('no rerank model in the bench');
  },
};

async function measureIngest(stores, dir) {
  const rand = prng(1);
  const tree = path.join(dir, 'tree');
  for (let f = 0; f < INGEST_FILES; f++) {
    const sub = path.join(tree, `section-${f % 10}`);
    mkdirSync(sub, { recursive: true });
    const parts = [`# Page ${f}`];
    for (let h = 0; h < 5; h++) parts.push(`## ${zipfWord(rand)} ${zipfWord(rand)}`, paragraph(rand), paragraph(rand), paragraph(rand));
    writeFileSync(path.join(sub, `page-${f}.md`), parts.join('\n\n') + '\n');
  }
  const base = stores.knowledge.createBase({ id: 'ingest', name: null, embedding_model: null, chunk_tokens: 256, chunk_overlap: 32 });
  const tokenizer = await chunkTokenizer();
  const t = performance.now();
  const summary = await ingest(
    { store: asAsyncKnowledge(stores.knowledge), models: noModels, base, paths: [tree], signal: new AbortController().signal },
    tokenizer,
  );
  const s = (performance.now() - t) / 1000;
  if (summary.failed > 0 || summary.indexed !== INGEST_FILES) throw new Error(`ingestion failed: ${JSON.stringify(summary)}`);
  return { files: summary.indexed, chunks: summary.chunks, s, chunks_per_s: summary.chunks / s };
}

/** The 100k-chunk base: generated documents of CHUNKS_PER_DOC chunks, each document in one transaction. */
function fill(stores) {
  const rand = prng(2);
  const vrand = prng(3);
  const kb = stores.knowledge;
  kb.createBase({ id: 'big', name: 'Bench', embedding_model: 'bench-emb', chunk_tokens: 256, chunk_overlap: 32 });
  const t = performance.now();
  let stored = 0;
  for (let d = 0; stored < CHUNKS; d++) {
    const n = Math.min(CHUNKS_PER_DOC, CHUNKS - stored);
    const chunks = Array.from({ length: n }, () => ({ text: paragraph(rand), tokens: 120, embedding: vector(vrand) }));
    const source = `docs/section-${d % 20}/page-${d}.md`;
    kb.putDocument(
      'big',
      { source, origin: `/bench/${source}`, content_hash: `h${d}`, metadata: { path: source, type: 'markdown', section: d % 20 }, bytes: 0 },
      chunks,
      1,
    );
    stored += n;
    if (process.stderr.isTTY) process.stderr.write(`\rfilled ${stored} / ${CHUNKS}`);
  }
  if (process.stderr.isTTY) process.stderr.write('\n');
  kb.setVersion('big', 1);
  return { s: (performance.now() - t) / 1000 };
}

/** Queries of two skewed words and one uniform word, as a user's mix of common and specific terms. */
function queries() {
  const rand = prng(4);
  const vrand = prng(5);
  return Array.from({ length: QUERIES }, () => {
    const text = `${zipfWord(rand)} ${words[Math.floor(rand() * words.length)]} ${zipfWord(rand)}`;
    const vec = vector(vrand);
    return { text, vec, blob: vectorBlob(vec) };
  });
}

async function timeAll(qs, fn) {
  const samples = [];
  let hits = 0;
  for (const q of qs) {
    const t = performance.now();
    const n = await fn(q);
    samples.push(performance.now() - t);
    hits += n;
  }
  return { samples, hits };
}

const started = performance.now();
const dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-kb-'));
try {
  const stores = openSqliteStores(dir);
  try {
    const ing = await measureIngest(stores, dir);
    stores.knowledge.removeBase('ingest');
    const filled = fill(stores);
    const db_mb = statSync(path.join(dir, 'lbot.db')).size / 1e6;

    // The direct floor: a second connection on the same file, the queries an SQLite user would write by hand.
    const raw = new Database(path.join(dir, 'lbot.db'), { readonly: true });
    loadSqliteVec(raw);
    const ftsDirect = raw.prepare('SELECT rowid, bm25(kb_chunks_fts) AS rank FROM kb_chunks_fts WHERE kb_chunks_fts MATCH ? ORDER BY rank LIMIT ?');
    const vecDirect = raw.prepare('SELECT id, vec_distance_cosine(embedding, ?) AS d FROM kb_chunks ORDER BY d LIMIT ?');
    const textOf = raw.prepare('SELECT text FROM kb_chunks WHERE id = ?');

    let queryVec = null;
    const models = {
      async embed() {
        return { embeddings: [queryVec] };
      },
      rerank: noModels.rerank,
    };
    const engine = createKnowledgeEngine({ store: asAsyncKnowledge(stores.knowledge), models, configBases: [] });
    const signal = new AbortController().signal;
    const retrieve = async (q) => {
      queryVec = q.vec;
      const r = await engine.retrieve('big', { query: q.text, top_k: TOP_K, filters: [], rerank_model_id: null, deadline_at: null, signal });
      return r.length;
    };
    const directBm25 = (q) => {
      const rows = ftsDirect.all(ftsQuery(q.text), TOP_K);
      for (const r of rows) textOf.get(r.rowid);
      return rows.length;
    };
    const directHybrid = (q) => {
      const text = ftsDirect.all(ftsQuery(q.text), TOP_K * 4);
      const near = vecDirect.all(q.blob, TOP_K * 4);
      q.exactTop = new Set(near.slice(0, TOP_K).map((r) => r.id));
      const ids = [...new Set([...text.map((r) => r.rowid), ...near.map((r) => r.id)])].slice(0, TOP_K);
      for (const id of ids) textOf.get(id);
      return ids.length;
    };
    const setEmbeddingModel = (model) => stores.knowledge.store.prepare('UPDATE kb_bases SET embedding_model = ? WHERE id = ?').run(model, 'big');

    // The machine may be shared: each side is sampled in alternating rounds so drift hits both alike.
    const qs = queries();
    const per = Math.ceil(qs.length / ROUNDS);
    const acc = { bm25: [], bm25Floor: [], hybrid: [], hybridFloor: [] };
    const hits = { bm25: 0, hybrid: 0 };
    for (const q of qs.slice(0, 10)) directBm25(q); // warm the page cache
    for (let round = 0; round < ROUNDS; round++) {
      const part = qs.slice(round * per, (round + 1) * per);
      acc.bm25Floor.push(...(await timeAll(part, directBm25)).samples);
      setEmbeddingModel(null);
      const b = await timeAll(part, retrieve);
      acc.bm25.push(...b.samples);
      hits.bm25 += b.hits;
      acc.hybridFloor.push(...(await timeAll(part, directHybrid)).samples);
      setEmbeddingModel('bench-emb');
      const h = await timeAll(part, retrieve);
      acc.hybrid.push(...h.samples);
      hits.hybrid += h.hits;
    }
    raw.close();

    // Recall@10 of the vector step against the exact scan of the hybrid floor, on the same queries: through the
    // engine's store (in-memory index, built on its second query) and through fresh stores (each query cold: the
    // sign bits scanned in SQL, as a one-shot `lbot kb search` does), whose time and the index build are reported.
    const recallOf = (search) => {
      let found = 0;
      for (const q of qs) found += search(q).filter((h) => q.exactTop.has(h.row)).length;
      return found / (qs.length * TOP_K);
    };
    const recallWarm = recallOf((q) => stores.knowledge.searchVector('big', q.vec, [], TOP_K));
    const cold = [];
    const recallCold = recallOf((q) => {
      const t = performance.now();
      const hits = new SqliteKnowledgeStore(stores.knowledge.store).searchVector('big', q.vec, [], TOP_K);
      cold.push(performance.now() - t);
      return hits;
    });
    const fresh = new SqliteKnowledgeStore(stores.knowledge.store);
    fresh.searchVector('big', qs[0].vec, [], TOP_K);
    const tb = performance.now();
    fresh.searchVector('big', qs[0].vec, [], TOP_K);
    const buildMs = performance.now() - tb;

    const p = (s) => ({ p50: percentile(s, 50), p99: percentile(s, 99) });
    const m = { bm25: p(acc.bm25), bm25Floor: p(acc.bm25Floor), hybrid: p(acc.hybrid), hybridFloor: p(acc.hybridFloor) };
    console.log(`kb bench: ${CHUNKS.toLocaleString('en')} chunks of ~120 tokens, ${DIMS}-dim float32 vectors, lbot.db ${db_mb.toFixed(0)} MB`);
    console.log(
      `ingestion (lbot kb add pipeline, no embeddings): ${ing.files} files, ${ing.chunks} chunks in ${ing.s.toFixed(2)} s = ${Math.round(ing.chunks_per_s).toLocaleString('en')} chunks/s`,
    );
    console.log(
      `fill to ${CHUNKS.toLocaleString('en')} chunks (store writes with vectors): ${filled.s.toFixed(1)} s (${Math.round(CHUNKS / filled.s).toLocaleString('en')} chunks/s)`,
    );
    console.log('');
    console.log(
      ['retrieval (top 10)'.padEnd(40), 'p50'.padStart(10), 'p99'.padStart(10), 'floor p50'.padStart(10), 'ratio'.padStart(7), 'target'.padStart(8)].join(' '),
    );
    const line = (label, v, floor, target) =>
      console.log(
        [
          label.padEnd(40),
          `${fmt(v.p50)} ms`.padStart(10),
          `${fmt(v.p99)} ms`.padStart(10),
          `${fmt(floor.p50)} ms`.padStart(10),
          `${ratio(v.p50, floor.p50)}x`.padStart(7),
          `${target} ms`.padStart(8),
        ].join(' '),
      );
    line('BM25 (knowledge engine)', m.bm25, m.bm25Floor, TARGETS.bm25_p50_ms);
    line('hybrid BM25 + vector, RRF (engine)', m.hybrid, m.hybridFloor, TARGETS.hybrid_p50_ms);
    console.log(`floors: direct FTS5 MATCH … ORDER BY rank LIMIT; direct FTS5 + direct vec_distance_cosine scan, same database`);
    console.log(
      `vector step recall@${TOP_K} vs the exact scan: ${recallWarm.toFixed(3)} (in-memory index), ${recallCold.toFixed(3)} (cold, sign bits in SQL: p50 ${fmt(percentile(cold, 50))} ms); index build ${fmt(buildMs)} ms`,
    );

    const r3 = (x) => Number(x.toFixed(3));
    const summary = {
      bench: 'kb',
      chunks: CHUNKS,
      dims: DIMS,
      db_mb: Number(db_mb.toFixed(1)),
      ingest_chunks_per_s: Math.round(ing.chunks_per_s),
      ingest_chunks: ing.chunks,
      fill_s: Number(filled.s.toFixed(2)),
      bm25_p50_ms: r3(m.bm25.p50),
      bm25_p99_ms: r3(m.bm25.p99),
      bm25_floor_p50_ms: r3(m.bm25Floor.p50),
      bm25_ratio_vs_floor: ratio(m.bm25.p50, m.bm25Floor.p50),
      hybrid_p50_ms: r3(m.hybrid.p50),
      hybrid_p99_ms: r3(m.hybrid.p99),
      hybrid_floor_p50_ms: r3(m.hybridFloor.p50),
      hybrid_ratio_vs_floor: ratio(m.hybrid.p50, m.hybridFloor.p50),
      mean_hits: { bm25: hits.bm25 / QUERIES, hybrid: hits.hybrid / QUERIES },
      vector_recall_at_10: r3(recallWarm),
      vector_recall_at_10_cold: r3(recallCold),
      vector_cold_p50_ms: r3(percentile(cold, 50)),
      vector_index_build_ms: Math.round(buildMs),
      targets: TARGETS,
      meets_targets: m.bm25.p50 <= TARGETS.bm25_p50_ms && m.hybrid.p50 <= TARGETS.hybrid_p50_ms,
      total_s: Number(((performance.now() - started) / 1000).toFixed(1)),
    };
    console.log('');
    report(
      'kb',
      [
        figure({
          name: 'kb.bm25',
          label: `BM25 retrieval p50 at ${CHUNKS.toLocaleString('en')} chunks`,
          unit: 'ms',
          value: m.bm25.p50,
          baseline: m.bm25Floor.p50,
          baselineLabel: 'direct FTS5 query',
          target: { of: 'value', op: '<=', limit: TARGETS.bm25_p50_ms },
        }),
        figure({
          name: 'kb.hybrid',
          label: `hybrid retrieval p50 at ${CHUNKS.toLocaleString('en')} chunks`,
          unit: 'ms',
          value: m.hybrid.p50,
          baseline: m.hybridFloor.p50,
          baselineLabel: 'direct FTS5 + sqlite-vec scan',
          target: { of: 'value', op: '<=', limit: TARGETS.hybrid_p50_ms },
        }),
        figure({ name: 'kb.ingest', label: 'ingestion, no embeddings', unit: 'chunks/s', value: ing.chunks_per_s }),
        figure({ name: 'kb.recall', label: `vector step recall@${TOP_K} vs the exact scan`, unit: 'recall', value: recallWarm }),
      ],
      summary,
    );
  } finally {
    stores.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
