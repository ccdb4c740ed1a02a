// History benchmark: transcript.page and transcript.search latency at 1,000,000 transcript rows (SQLite store).
// Run after `npm run build`: `node bench/history.mjs` (LBOT_BENCH_ROWS overrides the row count).
// A 10,000-row store measured in the same run is the baseline; the ratios show how latency grows with size.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { openSqliteStores } from '../dist/core/stores/sqlite/open.js';
import { figure, prng, report } from './stats.mjs';

const ROWS = Number(process.env.LBOT_BENCH_ROWS ?? 1_000_000);
const BASELINE_ROWS = 10_000;
const CONVERSATIONS = 100;
const PAGE_SAMPLES = 2000;
const SEARCH_SAMPLES = 100;

/** A vocabulary of pronounceable pseudo-words with a skewed (Zipf-like) frequency, as in real text. */
function vocabulary(rand, size) {
  const syl = ['ka', 'lo', 'mi', 're', 'tu', 'sa', 'ne', 'po', 'di', 'ga', 'ver', 'shi', 'an', 'or', 'el', 'ix', 'um', 'ber', 'co', 'ta'];
  const words = ['deploy', 'release', 'rollback', 'server', 'config', 'token', 'message', 'error', 'cache', 'build'];
  while (words.length < size) {
    let w = '';
    const n = 2 + Math.floor(rand() * 3);
    for (let i = 0; i < n; i++) w += syl[Math.floor(rand() * syl.length)];
    words.push(w);
  }
  return words;
}

function* rows(count, rand, words) {
  for (let i = 0; i < count; i++) {
    const n = 5 + Math.floor(rand() * 10);
    const parts = [];
    for (let j = 0; j < n; j++) parts.push(words[Math.floor(words.length * rand() ** 3)]);
    if (i % 997 === 0) parts.push(`incident-${i}`);
    const conversation_id = `conv-${Math.floor(rand() * CONVERSATIONS)}`;
    const role = i % 2 === 0 ? 'user' : 'assistant';
    const content = parts.join(' ');
    yield {
      event_id: `evt-${i}`,
      conversation_id,
      thread_id: null,
      role,
      item_type: 'message',
      content,
      content_json: { role, content },
      artifact_refs: [],
      run_id: role === 'assistant' ? `run-${i}` : null,
      runner_id: role === 'assistant' ? 'plugin:bench/echo/default' : null,
      metadata: {},
    };
  }
}

function fill(stores, count, seed) {
  const rand = prng(seed);
  const words = vocabulary(prng(7), 2000);
  const started = performance.now();
  const chunk = 100_000;
  const it = rows(count, rand, words);
  for (let done = 0; done < count; done += chunk) {
    const batch = [];
    for (let i = 0; i < chunk && done + i < count; i++) batch.push(it.next().value);
    stores.transcript.appendMany(batch);
    if (process.stderr.isTTY) process.stderr.write(`\rfilled ${Math.min(done + chunk, count)} / ${count}`);
  }
  if (process.stderr.isTTY) process.stderr.write('\n');
  return (performance.now() - started) / 1000;
}

function percentiles(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: at(0.5), p99: at(0.99), n: s.length };
}

function time(fn) {
  const t = performance.now();
  const out = fn();
  return { ms: performance.now() - t, out };
}

function measurePage(stores, rand) {
  const latest = stores.transcript.latestSeq('conv-0') ?? 0;
  const samples = [];
  for (let i = 0; i < PAGE_SAMPLES; i++) {
    const conversation_id = `conv-${Math.floor(rand() * CONVERSATIONS)}`;
    // Half the calls read the newest page, half continue from a cursor somewhere in the history.
    const before_seq = i % 2 === 0 ? null : 1 + Math.floor(rand() * latest);
    const { ms, out } = time(() => stores.transcript.page({ conversation_id, before_seq, limit: 50, direction: 'backward', include_artifacts: false }));
    if (out.items.length === 0 && before_seq === null) throw new Error(`no rows in ${conversation_id}`);
    samples.push(ms);
  }
  return percentiles(samples);
}

const QUERIES = [
  { name: 'common word', query: 'deploy' },
  { name: 'word, other case', query: 'ROLLBACK' },
  { name: 'two-word phrase', query: 'server config' },
  { name: 'rare token', query: 'incident-99' },
  { name: 'no match', query: 'qqxqq' },
  { name: '2 chars (scan)', query: 'zz' },
];

function measureSearch(stores, rand) {
  const out = {};
  for (const { name, query } of QUERIES) {
    const samples = [];
    let hits = 0;
    for (let i = 0; i < SEARCH_SAMPLES; i++) {
      const conversation_id = `conv-${Math.floor(rand() * CONVERSATIONS)}`;
      const r = time(() => stores.transcript.search({ conversation_id, query, top_k: 10 }));
      hits += r.out.length;
      samples.push(r.ms);
    }
    out[name] = { query, ...percentiles(samples), mean_hits: hits / SEARCH_SAMPLES };
  }
  return out;
}

function runAt(count, seed) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-history-'));
  try {
    const stores = openSqliteStores(dir);
    try {
      const fill_s = fill(stores, count, seed);
      const rand = prng(seed + 1);
      const page = measurePage(stores, rand);
      const search = measureSearch(stores, rand);
      const db_mb = statSync(path.join(dir, 'lbot.db')).size / 1e6;
      return { rows: count, fill_s, db_mb, page, search };
    } finally {
      stores.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (ms) => `${ms.toFixed(3)} ms`;
const started = performance.now();
const base = runAt(BASELINE_ROWS, 42);
const big = runAt(ROWS, 42);

console.log(`history bench: ${big.rows.toLocaleString('en')} transcript rows in ${CONVERSATIONS} conversations`);
console.log(`fill: ${big.fill_s.toFixed(1)} s (${Math.round(big.rows / big.fill_s).toLocaleString('en')} rows/s), lbot.db ${big.db_mb.toFixed(0)} MB`);
console.log('');
console.log(
  ['operation'.padEnd(34), 'p50'.padStart(11), 'p99'.padStart(11), `p50 @${BASELINE_ROWS / 1000}k`.padStart(12), 'ratio'.padStart(7), 'hits'.padStart(6)].join(
    ' ',
  ),
);
const line = (label, m, b, hits = '') =>
  console.log(
    [
      label.padEnd(34),
      fmt(m.p50).padStart(11),
      fmt(m.p99).padStart(11),
      fmt(b.p50).padStart(12),
      `${(m.p50 / b.p50).toFixed(1)}x`.padStart(7),
      String(hits).padStart(6),
    ].join(' '),
  );
line('history.page (limit 50)', big.page, base.page);
for (const [name, m] of Object.entries(big.search)) line(`history.search "${m.query}" (${name})`, m, base.search[name], m.mean_hits.toFixed(1));

const searchP50s = Object.values(big.search).map((m) => m.p50);
const summary = {
  bench: 'history',
  rows: big.rows,
  conversations: CONVERSATIONS,
  fill_s: Number(big.fill_s.toFixed(2)),
  db_mb: Number(big.db_mb.toFixed(1)),
  page_p50_ms: Number(big.page.p50.toFixed(4)),
  page_p99_ms: Number(big.page.p99.toFixed(4)),
  page_ratio_vs_baseline: Number((big.page.p50 / base.page.p50).toFixed(2)),
  search: Object.fromEntries(Object.entries(big.search).map(([k, m]) => [m.query, { p50_ms: Number(m.p50.toFixed(3)), p99_ms: Number(m.p99.toFixed(3)) }])),
  search_p50_max_ms: Number(Math.max(...searchP50s).toFixed(3)),
  targets: { page_p50_ms: 1, search_p50_ms: 50 },
  meets_targets: big.page.p50 <= 1 && Math.max(...searchP50s) <= 50,
  baseline_rows: BASELINE_ROWS,
  total_s: Number(((performance.now() - started) / 1000).toFixed(1)),
};
console.log('');
const worst = Object.values(big.search).reduce((w, m) => (m.p50 > w.p50 ? m : w));
report(
  'history',
  [
    figure({
      name: 'history.page',
      label: `transcript.page p50 at ${big.rows.toLocaleString('en')} rows`,
      unit: 'ms',
      value: big.page.p50,
      baseline: base.page.p50,
      baselineLabel: `${BASELINE_ROWS.toLocaleString('en')} rows`,
      target: { of: 'value', op: '<=', limit: 1 },
    }),
    figure({
      name: 'history.search',
      label: `slowest transcript.search p50 ("${worst.query}")`,
      unit: 'ms',
      value: worst.p50,
      baseline: base.search[Object.keys(big.search).find((k) => big.search[k] === worst)].p50,
      baselineLabel: `${BASELINE_ROWS.toLocaleString('en')} rows`,
      target: { of: 'value', op: '<=', limit: 50 },
    }),
    figure({ name: 'history.fill', label: 'transcript fill rate', unit: 'rows/s', value: big.rows / big.fill_s }),
  ],
  summary,
);
