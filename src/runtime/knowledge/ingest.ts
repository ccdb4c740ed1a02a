// `lbot kb add` / `reindex`: walks files and directories, re-chunks only documents whose content hash changed,
// embeds their chunks in batches, writes each document in its own transaction, and drops files that are gone.
import { createHash } from 'node:crypto';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { LbotError, toLbotError } from '../../core/errors.js';
import { chunkSections, type ChunkTokenizer } from '../../core/knowledge/chunking.js';
import type { ModelProvider } from '../../core/host/ports.js';
import type { JsonObject } from '../../core/protocol/event.js';
import type { KbBase, KbChunkInput, KbDocument, AsyncKnowledgeStore } from '../../core/stores/knowledge-types.js';
import { documentTypeOf, extractDocument, MAX_FILE_BYTES, SUPPORTED_EXTENSIONS, type DocumentType } from './extract.js';

/** Texts per embedding request. */
export const EMBED_BATCH = 32;
/** A document that chunks into more than this is refused (`kb.too_large`). */
export const MAX_CHUNKS_PER_DOCUMENT = 20_000;
/** One `kb add` walks at most this many files. */
export const MAX_FILES = 100_000;

export type IngestProgress =
  | { type: 'scan'; files: number }
  | {
      type: 'file';
      index: number;
      total: number;
      source: string;
      status: 'indexed' | 'unchanged' | 'failed';
      chunks: number;
      error?: { code: string; message: string };
    }
  | { type: 'embed'; source: string; batch: number; batches: number }
  | { type: 'removed'; source: string };

export type IngestSummary = {
  kb_id: string;
  version: number;
  files: number;
  indexed: number;
  unchanged: number;
  removed: number;
  failed: number;
  chunks: number;
  embedding_batches: number;
  failures: Array<{ source: string; code: string; message: string }>;
};

export type IngestOptions = {
  store: AsyncKnowledgeStore;
  models: ModelProvider;
  base: KbBase;
  /** Files and directories to add; a directory's documents that are no longer there are dropped. */
  paths: readonly string[];
  /** Instead of `paths`: every document of the base again, from where it was read (gone files are dropped). */
  reindex?: boolean;
  /** Metadata merged into every document added by this call. */
  metadata?: JsonObject;
  signal: AbortSignal;
  onProgress?(p: IngestProgress): void;
};

type Found = { abs: string; source: string; type: DocumentType };

const SKIPPED_DIRS = new Set(['node_modules', '.git', '.lbot']);

/** The files to index: a named file must be supported; a directory contributes its supported files, recursively. */
async function walk(paths: readonly string[]): Promise<{ files: Found[]; roots: string[] }> {
  const files: Found[] = [];
  const roots: string[] = [];
  const add = (f: Found) => {
    if (files.length >= MAX_FILES) throw new LbotError('kb.too_large', `more than ${MAX_FILES} files to add; add the tree in parts`);
    files.push(f);
  };
  for (const given of paths) {
    const abs = path.resolve(given);
    const st = await stat(abs).catch((err: unknown) => {
      throw new LbotError('kb.unreadable', `${given}: ${err instanceof Error ? err.message : String(err)}`);
    });
    if (st.isFile()) {
      const type = documentTypeOf(abs);
      if (!type) throw new LbotError('kb.unsupported_file', `${given}: lbot indexes ${SUPPORTED_EXTENSIONS.join(', ')} files`);
      add({ abs, source: path.basename(abs), type });
      continue;
    }
    if (!st.isDirectory()) throw new LbotError('kb.unsupported_file', `${given}: not a file or directory`);
    roots.push(abs);
    const base = path.basename(abs);
    const visit = async (dir: string): Promise<void> => {
      const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
      for (const e of entries) {
        if (e.name.startsWith('.') || SKIPPED_DIRS.has(e.name)) continue;
        const p = path.join(dir, e.name);
        // Symlinks are not followed: a link could lead out of the tree or round in a loop.
        if (e.isDirectory()) await visit(p);
        else if (e.isFile()) {
          const type = documentTypeOf(p);
          if (type) add({ abs: p, source: path.posix.join(base, path.relative(abs, p).split(path.sep).join('/')), type });
        }
      }
    };
    await visit(abs);
  }
  return { files, roots };
}

/** The base's documents whose files still exist, under their recorded sources. */
async function stillThere(docs: Map<string, KbDocument>): Promise<{ files: Found[]; roots: string[] }> {
  const files: Found[] = [];
  for (const d of docs.values()) {
    const type = documentTypeOf(d.origin);
    const st = await stat(d.origin).catch(() => null);
    if (type && st?.isFile()) files.push({ abs: d.origin, source: d.source, type });
  }
  return { files, roots: [] };
}

async function embedAll(opts: IngestOptions, source: string, texts: string[], onBatch: () => void): Promise<Array<readonly number[] | null>> {
  const model = opts.base.embedding_model;
  if (!model) return texts.map(() => null);
  const out: Array<readonly number[]> = [];
  const batches = Math.ceil(texts.length / EMBED_BATCH);
  for (let b = 0; b < batches; b++) {
    opts.signal.throwIfAborted();
    const input = texts.slice(b * EMBED_BATCH, (b + 1) * EMBED_BATCH);
    let got: number[][];
    try {
      got = (await opts.models.embed({ model_id: model, input, deadline_at: null, signal: opts.signal })).embeddings;
    } catch (err) {
      if (opts.signal.aborted) throw err;
      const e = toLbotError(err);
      throw new LbotError('kb.embedding_failed', `${source}: embedding model ${model} failed: ${e.message}`, { cause: err });
    }
    if (got.length !== input.length || got.some((v) => v.length === 0 || !v.every(Number.isFinite)))
      throw new LbotError(
        'kb.embedding_failed',
        `${source}: embedding model ${model} returned ${got.length} vectors for ${input.length} texts, or an unusable one`,
      );
    out.push(...got);
    onBatch();
    opts.onProgress?.({ type: 'embed', source, batch: b + 1, batches });
  }
  return out;
}

/** Adds (or re-adds) files to a base; see the module header. Throws `cancelled` when the signal aborts between documents. */
export async function ingest(opts: IngestOptions, tokenizer: ChunkTokenizer): Promise<IngestSummary> {
  const { store, base } = opts;
  const existing = new Map<string, KbDocument>((await store.documents(base.id)).map((d) => [d.source, d]));
  const { files, roots } = opts.reindex ? await stillThere(existing) : await walk(opts.paths);
  opts.onProgress?.({ type: 'scan', files: files.length });
  const version = base.version + 1;
  const summary: IngestSummary = {
    kb_id: base.id,
    version: base.version,
    files: files.length,
    indexed: 0,
    unchanged: 0,
    removed: 0,
    failed: 0,
    chunks: 0,
    embedding_batches: 0,
    failures: [],
  };
  const seen = new Set<string>();
  for (const [index, f] of files.entries()) {
    if (opts.signal.aborted)
      throw new LbotError('cancelled', `interrupted after ${index} of ${files.length} files; knowledge base ${base.id} stays at version ${base.version}`);
    seen.add(f.source);
    const report = (status: 'indexed' | 'unchanged' | 'failed', chunks: number, error?: { code: string; message: string }) =>
      opts.onProgress?.({ type: 'file', index: index + 1, total: files.length, source: f.source, status, chunks, ...(error ? { error } : {}) });
    try {
      const st = await stat(f.abs);
      if (st.size > MAX_FILE_BYTES) throw new LbotError('kb.too_large', `${f.source}: ${st.size} bytes, over the limit of ${MAX_FILE_BYTES}`);
      const bytes = await readFile(f.abs);
      const content_hash = createHash('sha256').update(bytes).digest('hex');
      const before = existing.get(f.source);
      if (!opts.reindex && before && before.content_hash === content_hash && before.origin === f.abs) {
        summary.unchanged++;
        report('unchanged', before.chunk_count);
        continue;
      }
      const extracted = await extractDocument(bytes, f.source, f.type);
      const chunks = chunkSections(extracted.sections, { chunkTokens: base.chunk_tokens, overlap: base.chunk_overlap }, tokenizer);
      if (chunks.length > MAX_CHUNKS_PER_DOCUMENT)
        throw new LbotError(
          'kb.too_large',
          `${f.source}: ${chunks.length} chunks, over the limit of ${MAX_CHUNKS_PER_DOCUMENT}; raise --chunk-tokens or split the file`,
        );
      const vectors = await embedAll(
        opts,
        f.source,
        chunks.map((c) => c.text),
        () => summary.embedding_batches++,
      );
      const inputs: KbChunkInput[] = chunks.map((c, i) => ({ text: c.text, tokens: c.tokens, embedding: vectors[i] ?? null }));
      const metadata: JsonObject = {
        ...opts.metadata,
        path: f.source,
        file_name: path.basename(f.abs),
        type: f.type,
        title: extracted.title,
        bytes: bytes.length,
        ...(extracted.pages !== undefined ? { pages: extracted.pages } : {}),
      };
      await store.putDocument(base.id, { source: f.source, origin: f.abs, content_hash, metadata, bytes: bytes.length }, inputs, version);
      summary.indexed++;
      summary.chunks += chunks.length;
      report('indexed', chunks.length);
    } catch (err) {
      if (opts.signal.aborted) throw new LbotError('cancelled', `interrupted at ${f.source}; knowledge base ${base.id} stays at version ${base.version}`);
      const e = toLbotError(err);
      // A model that is down fails every file alike: stop instead of reporting each one.
      if (e.code === 'kb.embedding_failed' || e.code.startsWith('store.')) throw e;
      summary.failed++;
      summary.failures.push({ source: f.source, code: e.code, message: e.message });
      report('failed', 0, { code: e.code, message: e.message });
    }
  }
  const underRoot = (origin: string) => roots.some((r) => origin.startsWith(r + path.sep));
  const gone = [...existing.values()].filter((d) => !seen.has(d.source) && (opts.reindex || underRoot(d.origin))).map((d) => d.source);
  summary.removed = await store.removeDocuments(base.id, gone);
  for (const source of gone) opts.onProgress?.({ type: 'removed', source });
  if (summary.indexed > 0 || summary.removed > 0) {
    await store.setVersion(base.id, version);
    summary.version = version;
  }
  await store.resetDims(base.id);
  return summary;
}

/** The tokenizer chunk budgets are counted in (OpenAI's o200k, the default of gpt-tokenizer). */
export async function chunkTokenizer(): Promise<ChunkTokenizer> {
  const { encode, decode } = await import('gpt-tokenizer/encoding/o200k_base');
  return { encode: (t) => encode(t), decode: (ids) => decode(ids) };
}
