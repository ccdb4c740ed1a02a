// An interrupted `lbot kb add`: a real process stopped while it waits for an embedding call (the fake upstream
// holds it), once by Ctrl-C (SIGINT) and once by SIGKILL. Each time the base stays at its previous version
// and shows only whole documents (chunks, FTS5 index and sign bits agree with each document's chunk count);
// the rerun indexes what is left, each file once.
import Database from 'better-sqlite3';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeScriptSchema, type FakeScriptInput } from '../../../src/runtime/models/fake-server-script.js';
import { startFakeModelServer, type FakeServer } from '../../../src/runtime/models/fake-server.js';
import { scenario, type Scenario } from '../host/harness.js';

const KEY = 'sk-e2e-KB-interrupt-0123';
const env = { E2E_MODEL_KEY: KEY };
const FILES = 7;
const servers: FakeServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A fresh fake upstream, and the scenario's config pointed at it. */
async function upstream(s: Scenario, extra: Partial<FakeScriptInput> = {}): Promise<FakeServer> {
  const server = await startFakeModelServer(FakeScriptSchema.parse({ api_key: KEY, models: ['emb-small'], embedding_dims: 64, ...extra }));
  servers.push(server);
  const emb = { id: 'emb', model_type: 'embedding', model: 'emb-small', provider: 'openai', base_url: server.openaiBaseUrl, api_key_env: 'E2E_MODEL_KEY' };
  await s.writeConfig({ models: [{ ...emb, max_retries: 0 }] });
  return server;
}

const embedCalls = (server: FakeServer) => server.requests.filter((r) => r.path === '/v1/embeddings').length;

/** Page i: several paragraphs (several chunks at a 40-token budget), each with the page's own marker word. */
const page = (i: number) =>
  [`# Page ${i}`, ...Array.from({ length: 4 }, (_, p) => `Paragraph ${p} of page ${i} mentions marker${i} and the harbour ledger entries kept for it.`)].join(
    '\n\n',
  ) + '\n';

type Shape = { version: number; documents: string[]; partial: string[]; fts_ok: boolean; chunks: number; bits: number };

/** What a reader of the base sees, and whether any document is only partly there. */
function shapeOf(dataDir: string): Shape {
  const db = new Database(path.join(dataDir, 'lbot.db'));
  try {
    const version = Number(db.prepare<[], { version: number }>("SELECT version FROM kb_bases WHERE id = 'docs'").get()?.version);
    const docs = db
      .prepare<[], { source: string; chunk_count: number; stored: number; bits: number }>(
        `SELECT d.source, d.chunk_count,
           (SELECT count(*) FROM kb_chunks c WHERE c.document_id = d.id) AS stored,
           (SELECT count(*) FROM kb_chunk_bits b JOIN kb_chunks c ON c.id = b.chunk_id WHERE c.document_id = d.id) AS bits
         FROM kb_documents d WHERE d.base_id = 'docs' ORDER BY d.source`,
      )
      .all();
    let fts_ok = true;
    try {
      db.prepare("INSERT INTO kb_chunks_fts (kb_chunks_fts) VALUES ('integrity-check')").run();
    } catch {
      fts_ok = false;
    }
    const total = (sql: string) => Number(db.prepare<[], { n: number }>(sql).get()?.n);
    return {
      version,
      documents: docs.map((d) => d.source),
      partial: docs.filter((d) => d.stored !== d.chunk_count || d.bits !== d.chunk_count || d.chunk_count === 0).map((d) => d.source),
      fts_ok,
      chunks: total("SELECT count(*) AS n FROM kb_chunks WHERE base_id = 'docs'"),
      bits: total("SELECT count(*) AS n FROM kb_chunk_bits WHERE base_id = 'docs'"),
    };
  } finally {
    db.close();
  }
}

/** Starts `kb add` and resolves once it waits on a held embedding call (the documents before it are written). */
async function addUntilHeld(s: Scenario, server: FakeServer, tree: string) {
  const child = s.spawn(['--json', 'kb', 'add', 'docs', tree], { env });
  let ended = false;
  void Promise.resolve(child).then(() => (ended = true));
  await vi.waitFor(
    () => {
      if (ended) throw new Error('kb add ended before an embedding call was held');
      expect(server.heldStreams).toBe(1);
    },
    { timeout: 30_000, interval: 20 },
  );
  // Wrapped: a child process is itself a promise, which `await` would wait for.
  return { child };
}

const sources = (n: number) => Array.from({ length: n }, (_, i) => `tree/page-${i}.md`);

describe('lbot kb add, interrupted', () => {
  it('keeps the base at its previous version with whole documents only, and the rerun finishes the rest once', { timeout: 120_000 }, async () => {
    const s = await scenario();
    const tree = path.join(s.root, 'tree');
    await mkdir(tree);
    for (let i = 0; i < FILES; i++) await writeFile(path.join(tree, `page-${i}.md`), page(i));
    await upstream(s);
    const created = await s.lbot(['--json', 'kb', 'create', 'docs', '--embedding-model', 'emb', '--chunk-tokens', '40', '--overlap', '0'], { env });
    expect(created.exitCode, created.stderr).toBe(0);

    // Ctrl-C while the third document's embeddings are in flight: two documents written, version unchanged.
    const first = await upstream(s, { hold_embeddings_after: 2 });
    const { child: interrupted } = await addUntilHeld(s, first, tree);
    interrupted.kill('SIGINT');
    const r1 = await interrupted;
    expect(r1.exitCode).not.toBe(0);
    expect(r1.stderr).toContain('error[cancelled]');
    expect(r1.stderr).toContain('stays at version 0');
    const afterInt = shapeOf(s.dataDir);
    expect(afterInt).toMatchObject({ version: 0, documents: sources(2), partial: [], fts_ok: true });
    expect(afterInt.chunks).toBeGreaterThanOrEqual(2 * 4);
    expect(afterInt.bits).toBe(afterInt.chunks);

    // SIGKILL in the same place two documents later: no handler runs, SQLite's journal alone keeps the base whole.
    const second = await upstream(s, { hold_embeddings_after: 2 });
    const { child: killed } = await addUntilHeld(s, second, tree);
    killed.kill('SIGKILL');
    const r2 = await killed;
    expect(r2.signal).toBe('SIGKILL');
    const afterKill = shapeOf(s.dataDir);
    expect(afterKill).toMatchObject({ version: 0, documents: sources(4), partial: [], fts_ok: true });
    expect(afterKill.bits).toBe(afterKill.chunks);

    // Queries see the finished documents and nothing of the ones not yet written.
    const last = await upstream(s);
    const search = async (q: string) => {
      const r = await s.lbot(['--json', 'kb', 'search', 'docs', q, '--top-k', '20'], { env });
      expect(r.exitCode, r.stderr).toBe(0);
      return (JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as { results: Array<{ document_id: string; text: string }> }).results;
    };
    const seen = await search('marker3');
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((e) => e.text.includes('marker3')).every((e) => e.document_id === 'tree/page-3.md')).toBe(true);
    expect((await search('marker5')).some((e) => e.text.includes('marker5'))).toBe(false);

    // The rerun: the four finished files are unchanged by hash, the three left are indexed, each once.
    const before = embedCalls(last);
    const rerun = await s.lbot(['--json', 'kb', 'add', 'docs', tree], { env });
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    const summary = JSON.parse(rerun.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
    expect(summary).toMatchObject({ files: FILES, indexed: FILES - 4, unchanged: 4, removed: 0, failed: 0, version: 1 });
    expect(embedCalls(last) - before).toBe(FILES - 4);
    const done = shapeOf(s.dataDir);
    expect(done).toMatchObject({ version: 1, documents: sources(FILES), partial: [], fts_ok: true });
    expect(done.bits).toBe(done.chunks);
    expect((await search('marker5')).some((e) => e.document_id === 'tree/page-5.md')).toBe(true);
  });
});
