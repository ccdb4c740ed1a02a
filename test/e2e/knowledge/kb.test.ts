// `lbot kb` through the built binary: ingest the Markdown of fixtures/skills/real and a PDF, re-add after an
// edit (only that file re-indexed), search (BM25, filters, semantic via the fake server's concept embeddings,
// rerank), and knowledge.list / knowledge.retrieve in real runs with a granted and an ungranted base; HTML and
// JSON documents, `kb reindex` and `kb rm`.
import Database from 'better-sqlite3';
import { cp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeScriptSchema } from '../../../src/runtime/models/fake-server-script.js';
import { startFakeModelServer, type FakeServer } from '../../../src/runtime/models/fake-server.js';
import { api, done, REPO_ROOT, reports, scenario, summaries, type Scenario } from '../host/harness.js';

const KEY = 'sk-e2e-KB-0123456789';
const env = { E2E_MODEL_KEY: KEY };
let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Summary = { indexed: number; unchanged: number; removed: number; failed: number; chunks: number; embedding_batches: number; version: number };
type Entry = { kb_id: string; document_id: string; chunk_id: string; score: number; text: string; content: string; metadata: Record<string, unknown> };

async function setup(): Promise<{ s: Scenario; tree: string; pdf: string }> {
  server = await startFakeModelServer(
    FakeScriptSchema.parse({
      api_key: KEY,
      models: ['emb-small', 'rerank-small'],
      embedding_dims: 2048,
      embedding_concepts: [['automobile', 'car', 'vehicle', 'motorcar']],
    }),
  );
  const s = await scenario();
  const common = { provider: 'openai', base_url: server.openaiBaseUrl, api_key_env: 'E2E_MODEL_KEY', max_retries: 0 };
  await s.writeConfig({
    models: [
      { id: 'emb', model_type: 'embedding', model: 'emb-small', ...common },
      { id: 'rr', model_type: 'rerank', model: 'rerank-small', ...common },
    ],
  });
  const tree = path.join(s.root, 'real');
  await cp(path.join(REPO_ROOT, 'fixtures/skills/real'), tree, { recursive: true });
  await writeFile(path.join(tree, 'garage.md'), '# Garage\n\nThe automobile needs new tyres before winter.\n');
  return { s, tree, pdf: path.join(REPO_ROOT, 'fixtures/knowledge/harbour-manual.pdf') };
}

async function json<T>(s: Scenario, args: string[]): Promise<T> {
  const r = await s.lbot(['--json', ...args], { env });
  expect(r.exitCode, r.stderr).toBe(0);
  const last = r.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as T;
}

const search = (s: Scenario, ...args: string[]) => json<{ mode: string; results: Entry[] }>(s, ['kb', 'search', ...args]);

describe('lbot kb', () => {
  it('ingests a tree and a PDF, re-indexes only what changed, drops what was deleted, and searches', { timeout: 240_000 }, async () => {
    const { s, tree, pdf } = await setup();
    await json(s, ['kb', 'create', 'docs', '--embedding-model', 'emb', '--chunk-tokens', '200', '--overlap', '20']);
    const first = await json<Summary>(s, ['kb', 'add', 'docs', tree, pdf]);
    expect(first).toMatchObject({ failed: 0, unchanged: 0, version: 1 });
    expect(first.indexed).toBeGreaterThanOrEqual(19);
    expect(first.embedding_batches).toBeGreaterThan(0);

    // Edit one file, delete another: one re-indexed, one removed, the rest unchanged (no embedding call for them).
    const embedsBefore = server?.requests.filter((q) => q.path === '/v1/embeddings').length ?? 0;
    await writeFile(path.join(tree, 'garage.md'), '# Garage\n\nThe automobile needs new tyres before winter. Check the brakes.\n');
    await rm(path.join(tree, 'brand-guidelines/SKILL.md'));
    const again = await json<Summary>(s, ['kb', 'add', 'docs', tree, pdf]);
    expect(again).toMatchObject({ indexed: 1, removed: 1, unchanged: first.indexed - 2, failed: 0, version: 2 });
    expect((server?.requests.filter((q) => q.path === '/v1/embeddings').length ?? 0) - embedsBefore).toBe(1);
    const shown = await json<{ documents: Array<{ source: string; version: number }> }>(s, ['kb', 'show', 'docs']);
    expect(shown.documents.find((d) => d.source === 'real/garage.md')?.version).toBe(2);
    expect(shown.documents.find((d) => d.source === 'real/mcp-builder/SKILL.md')?.version).toBe(1);
    expect(shown.documents.some((d) => d.source === 'real/brand-guidelines/SKILL.md')).toBe(false);

    // BM25 hit in the PDF, with its metadata; a filter excludes it.
    const harbour = await search(s, 'docs', 'harbourmaster mooring ledger', '--top-k', '3');
    expect(harbour.mode).toBe('hybrid');
    expect(harbour.results[0]).toMatchObject({ kb_id: 'docs', document_id: 'harbour-manual.pdf', metadata: { type: 'pdf', pages: 2 } });
    expect(harbour.results[0]?.chunk_id).toMatch(/^harbour-manual\.pdf#\d+$/);
    const onlyMd = await search(s, 'docs', 'harbourmaster mooring ledger', '--filter', '{"type":"markdown"}');
    expect(onlyMd.results.every((r) => r.metadata.type === 'markdown')).toBe(true);

    // A query sharing no word with the answer: found through the embedding model.
    const semantic = await search(s, 'docs', 'car', '--top-k', '1');
    expect(semantic.results[0]?.document_id).toBe('real/garage.md');
    expect(semantic.results[0]?.text).not.toMatch(/\bcar\b/i);

    // Rerank through a configured rerank model reorders by its relevance score.
    const reranked = await search(s, 'docs', 'spring tide quay', '--rerank-model', 'rr', '--top-k', '2');
    expect(reranked.results[0]?.document_id).toBe('harbour-manual.pdf');
    expect(server?.requests.some((q) => q.path === '/v1/rerank')).toBe(true);

    const listed = await s.lbot(['--json', 'kb', 'list'], { env });
    expect(listed.stdout).toContain('"kb_id":"docs"');

    // Refusals with stable codes.
    const missing = await s.lbot(['kb', 'search', 'nope', 'x'], { env });
    expect(missing.stderr).toContain('error[kb.not_found]');
    const badName = await s.lbot(['kb', 'create', '../etc'], { env });
    expect(badName.stderr).toContain('error[kb.invalid_name]');
    const binary = path.join(s.root, 'blob.txt');
    await writeFile(binary, Buffer.from([0x41, 0x00, 0x42]));
    const refused = await s.lbot(['kb', 'add', 'docs', binary], { env });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('kb.unsupported_file');
    const badFilter = await s.lbot(['kb', 'search', 'docs', 'x', '--filter', '[{"field":"a\\"b","value":1}]'], { env });
    expect(badFilter.stderr).toContain('error[invalid_argument]');
  });

  it('serves knowledge.list and knowledge.retrieve in a real run: granted bases only, filters honoured, audited', { timeout: 240_000 }, async () => {
    const { s, tree, pdf } = await setup();
    await json(s, ['kb', 'create', 'docs', '--embedding-model', 'emb']);
    await json(s, ['kb', 'add', 'docs', tree, pdf]);
    await json(s, ['kb', 'create', 'secret']);
    await json(s, ['kb', 'add', 'secret', pdf]);
    await s.editRunner((doc) => {
      const spec = doc.spec as Record<string, Record<string, unknown>>;
      spec.permissions = { ...spec.permissions, knowledge_bases: ['list', 'retrieve'], models: ['rerank'] };
      spec.capabilities = { ...spec.capabilities, knowledge_retrieval: true };
      Object.assign(spec, {
        config: [
          { name: 'kbs', type: 'knowledge-base-multi-selector' },
          { name: 'reranker', type: 'rerank-model-selector' },
        ],
      });
    });
    const script = [
      api('knowledge.list', {}),
      api('knowledge.retrieve', { kb_id: 'docs', query_text: 'spring tides full moon', top_k: 2 }),
      api('knowledge.retrieve', { kb_id: 'docs', query_text: 'spring tides full moon', filters: [{ field: 'type', operator: 'eq', value: 'markdown' }] }),
      api('knowledge.retrieve', { kb_id: 'docs', query_text: 'motorcar', top_k: 1 }),
      api('knowledge.retrieve', { kb_id: 'secret', query_text: 'tides' }),
      api('knowledge.retrieve', { kb_id: 'docs', query_text: 'x', filters: [{ field: 'type', operator: 'in', value: 'pdf' }] }),
      api('knowledge.retrieve', { kb_id: 'docs', query_text: 'spring tide quay', top_k: 2, rerank_model_id: 'rr' }),
      api('knowledge.retrieve', { kb_id: 'docs', query_text: 'spring tide quay', rerank_model_id: 'emb' }),
      done(),
    ];
    const reranksBefore = server?.requests.filter((q) => q.path === '/v1/rerank').length ?? 0;
    const r = await s.run(script, { json: true, config: { kbs: ['docs'], reranker: 'rr' }, env });
    expect(r.exitCode, r.stderr).toBe(0);
    const [list, plain, filtered, semantic, ungranted, badFilter, reranked, ungrantedRerank] = reports(r.stdout) as Array<{
      ok: boolean;
      result?: Record<string, unknown>;
      error?: { code: string };
    }>;
    expect((list?.result?.knowledge_bases as Array<{ kb_id: string }>).map((k) => k.kb_id)).toEqual(['docs']);
    const plainResults = plain?.result?.results as Entry[];
    expect(plainResults).toHaveLength(2);
    expect(plainResults[0]).toMatchObject({ document_id: 'harbour-manual.pdf', metadata: { type: 'pdf' } });
    expect(plainResults[0]?.content).toBe(plainResults[0]?.text);
    expect((filtered?.result?.results as Entry[]).every((e) => e.metadata.type === 'markdown')).toBe(true);
    expect((semantic?.result?.results as Entry[])[0]?.document_id).toBe('real/garage.md');
    expect(ungranted).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(badFilter).toMatchObject({ ok: false, error: { code: 'invalid_argument' } });
    expect((reranked?.result?.results as Entry[])[0]?.document_id).toBe('harbour-manual.pdf');
    expect((server?.requests.filter((q) => q.path === '/v1/rerank').length ?? 0) - reranksBefore).toBe(1);
    expect(ungrantedRerank).toMatchObject({ ok: false, error: { code: 'unauthorized' } });

    const runId = String(summaries(r.stdout)[0]?.run_id ?? '');
    const shown = await s.lbot(['--json', 'runs', 'show', runId], { env });
    expect(shown.stdout).toContain('"resource":"secret"');
    expect(shown.stdout).toContain('"resource":"knowledge_bases"');
  });

  it('ingests HTML and JSON, reindexes every document (dropping gone files), and removes a base', { timeout: 120_000 }, async () => {
    const s = await scenario();
    const site = path.join(s.root, 'site');
    await cp(path.join(REPO_ROOT, 'fixtures/knowledge/site'), site, { recursive: true });
    await json(s, ['kb', 'create', 'harbour']);
    const added = await json<Summary>(s, ['kb', 'add', 'harbour', site]);
    expect(added).toMatchObject({ indexed: 2, failed: 0, version: 1 });

    // HTML: the title becomes metadata, headings and paragraphs are text, head/script/style/comments are not.
    const surge = await search(s, 'harbour', 'barometer surge', '--top-k', '1');
    expect(surge.mode).toBe('bm25');
    expect(surge.results[0]).toMatchObject({
      document_id: 'site/tide-tables.html',
      metadata: { type: 'html', title: 'Tide tables & berthing windows', file_name: 'tide-tables.html' },
    });
    expect(surge.results[0]?.text).toContain('980 hPa');
    expect((await search(s, 'harbour', 'analytics sans serif generated')).results).toEqual([]);
    // JSON: one section per top-level key, values kept.
    const ice = await search(s, 'harbour', 'ice plant', '--top-k', '1');
    expect(ice.results[0]).toMatchObject({ document_id: 'site/berths.json', metadata: { type: 'json' } });
    expect(ice.results[0]?.text).toContain('fishing_pier');

    // reindex re-reads every document, unchanged ones too, and drops the file that is gone.
    await rm(path.join(site, 'tide-tables.html'));
    const re = await json<Summary>(s, ['kb', 'reindex', 'harbour']);
    expect(re).toMatchObject({ files: 1, indexed: 1, unchanged: 0, removed: 1, failed: 0, version: 2 });
    const after = (await search(s, 'harbour', 'barometer ice plant')).results;
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((r) => r.document_id === 'site/berths.json')).toBe(true);

    // rm removes the base with its chunks; a second rm and a search of it are kb.not_found.
    await json(s, ['kb', 'create', 'other']);
    expect(await json<{ removed: string }>(s, ['kb', 'rm', 'harbour'])).toEqual({ ok: true, removed: 'harbour' });
    const listed = await s.lbot(['--json', 'kb', 'list'], { env });
    expect(listed.stdout).toContain('"kb_id":"other"');
    expect(listed.stdout).not.toContain('"kb_id":"harbour"');
    const again = await s.lbot(['kb', 'rm', 'harbour'], { env });
    expect(again.exitCode).not.toBe(0);
    expect(again.stderr).toContain('error[kb.not_found]');
    const db = new Database(path.join(s.dataDir, 'lbot.db'), { readonly: true });
    expect(db.prepare("SELECT count(*) AS n FROM kb_chunks WHERE base_id = 'harbour'").get()).toEqual({ n: 0 });
    expect(db.prepare("SELECT count(*) AS n FROM kb_chunks_fts WHERE kb_chunks_fts MATCH 'fishing'").get()).toEqual({ n: 0 });
    db.close();
  });
});
