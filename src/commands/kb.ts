// `lbot kb create|add|list|show|rm|reindex|search`: knowledge bases in the data dir (docs/knowledge.md).
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import { parseJsonText } from '../core/json-parse.js';
import { MAX_TOP_K, normalizeFilters } from '../core/protocol/knowledge.js';
import type { KnowledgeBaseInfo, RetrievalEntry } from '../core/protocol/knowledge.js';
import { firstIssue } from '../core/zod-issue.js';
import type { IngestProgress, IngestSummary } from '../runtime/knowledge/ingest.js';
import type { CliContext, GetContext } from './shared/context.js';
import { collect, parseFlags, parseKeyValues } from './shared/flags.js';
import { IntFlag } from './shared/schemas.js';
import { exitCodeFor } from './shared/exit-codes.js';
import * as shapes from '../core/shapes/index.js';

const admin = () => import('../runtime/knowledge/admin.js');

const envOf = (ctx: CliContext) => ({ dataDir: ctx.flags.dataDir, databaseUrl: ctx.flags.store, config: ctx.configFile().config, signal: ctx.signal });

/**
 * Progress of an ingestion on stderr: one rewritten status line on a terminal, a plain line per file
 * otherwise (CI logs); with --json each event is a KbProgress NDJSON line on stderr instead. With --quiet,
 * only the files that failed are named.
 */
function progressReporter(ctx: CliContext, quiet: boolean): { on(p: IngestProgress): void; end(): void } {
  if (quiet)
    return {
      on(p) {
        if (p.type === 'file' && p.status === 'failed') ctx.output.warn(`${p.source}: [${p.error?.code ?? ''}] ${p.error?.message ?? 'failed'}`);
      },
      end() {},
    };
  const tty = process.stderr.isTTY === true && !ctx.output.json;
  let files = 0;
  let chunks = 0;
  let batches = 0;
  let total = 0;
  let live = false;
  const status = (source: string) => {
    const line = `lbot: ${files}/${total} files, ${chunks} chunks, ${batches} embedding batches  ${source}`;
    const width = process.stderr.columns || 100;
    process.stderr.write(`\r${line.slice(0, width - 1).padEnd(width - 1)}`);
    live = true;
  };
  return {
    on(p) {
      if (ctx.output.json) {
        ctx.output.progress(shapes.KbProgress, { progress: p });
        return;
      }
      if (p.type === 'scan') total = p.files;
      if (p.type === 'embed') batches++;
      if (p.type === 'file') {
        files = p.index;
        chunks += p.status === 'indexed' ? p.chunks : 0;
      }
      if (tty) {
        if (p.type === 'file' && p.status === 'failed') {
          process.stderr.write('\n');
          ctx.output.warn(`${p.source}: ${p.error?.message ?? 'failed'}`);
        }
        status(p.type === 'scan' ? '' : p.source);
        return;
      }
      if (p.type === 'scan') ctx.output.notice(`${p.files} files to check`);
      else if (p.type === 'file' && p.status === 'failed') ctx.output.warn(`${p.source}: [${p.error?.code ?? ''}] ${p.error?.message ?? 'failed'}`);
      else if (p.type === 'file') ctx.output.notice(`[${p.index}/${p.total}] ${p.source}: ${p.status}${p.status === 'indexed' ? `, ${p.chunks} chunks` : ''}`);
      else if (p.type === 'removed') ctx.output.notice(`${p.source}: removed (no longer there)`);
    },
    end() {
      if (live) process.stderr.write('\n');
    },
  };
}

const renderSummary = (s: IngestSummary) =>
  `${s.kb_id}: ${s.indexed} indexed, ${s.unchanged} unchanged, ${s.removed} removed, ${s.failed} failed; ${s.chunks} chunks, ${s.embedding_batches} embedding batches; version ${s.version}`;

const renderList = (bases: readonly KnowledgeBaseInfo[]) =>
  bases.length === 0
    ? 'no knowledge bases (create one with lbot kb create NAME, then lbot kb add NAME PATH…)'
    : bases
        .map((b) =>
          `${b.kb_id}  ${b.origin}  ${b.kb_type ?? '-'}  ${b.documents} documents  ${b.chunks} chunks  v${b.version}  ${b.embedding_model ?? ''}`.trimEnd(),
        )
        .join('\n');

const renderResults = (r: { results: RetrievalEntry[] }) =>
  r.results.length === 0
    ? 'no results'
    : r.results.map((e, i) => `${i + 1}. ${e.chunk_id}  score ${e.score.toFixed(4)}\n   ${e.text.replace(/\s+/g, ' ').slice(0, 240)}`).join('\n');

async function runIngestion(ctx: CliContext, name: string, paths: string[], opts: { metadata?: Record<string, string>; reindex?: boolean; quiet: boolean }) {
  const { quiet, ...ingest } = opts;
  const progress = progressReporter(ctx, quiet);
  let summary: IngestSummary;
  try {
    summary = await (await admin()).addToKb(envOf(ctx), { name, paths, ...ingest, onProgress: (p) => progress.on(p) });
  } finally {
    progress.end();
  }
  ctx.output.item(shapes.KbIngestion, { ok: summary.failed === 0, ...summary }, renderSummary);
  const first = summary.failures[0];
  // The base is usable, but a file was left out: the exit code says which kind of failure came first.
  if (first) ctx.exitCode = exitCodeFor(first.code);
}

export function registerKb(program: Command, getCtx: GetContext): void {
  const kb = program.command('kb').description('Build and search knowledge bases (docs/knowledge.md)');
  kb.command('create <name>')
    .description('create an empty knowledge base')
    .option('--embedding-model <id>', 'a configured embedding model: adds vector and hybrid retrieval')
    .option('--chunk-tokens <n>', 'token budget of one chunk (default 400)')
    .option('--overlap <n>', 'tokens a chunk repeats from the one before (default 50)')
    .action(async (name: string, raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ embeddingModel: z.string().min(1).optional(), chunkTokens: IntFlag.optional(), overlap: IntFlag.optional() }), raw);
      const base = await (await admin()).createKb(envOf(ctx), { name, ...f });
      ctx.output.item(
        shapes.KbCreated,
        base,
        (b) =>
          `created knowledge base ${b.id} (${b.chunk_tokens} tokens a chunk, overlap ${b.chunk_overlap}${b.embedding_model ? `, embeddings ${b.embedding_model}` : ''})`,
      );
    });
  kb.command('add <name> <paths...>')
    .description('add files and directories (Markdown, text, HTML, JSON, PDF); unchanged files are skipped, deleted ones dropped')
    .option('--meta <key=value>', 'metadata on every added document (repeatable)', collect)
    .option('--quiet', 'no progress; only files that failed are named')
    .action(async (name: string, paths: string[], raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ meta: z.array(z.string()).optional(), quiet: z.boolean().default(false) }), raw);
      await runIngestion(ctx, name, paths, { metadata: parseKeyValues(f.meta, '--meta'), quiet: f.quiet });
    });
  kb.command('reindex <name>')
    .description('re-read, re-chunk and re-embed every document of a base (files that are gone are dropped)')
    .option('--quiet', 'no progress; only files that failed are named')
    .action(async (name: string, raw: unknown) => {
      const f = parseFlags(z.object({ quiet: z.boolean().default(false) }), raw);
      await runIngestion(getCtx(), name, [], { reindex: true, quiet: f.quiet });
    });
  kb.command('list')
    .description('list knowledge bases (built with lbot kb, and listed in lbot.config.json)')
    .action(async () => {
      const ctx = getCtx();
      const bases = await (await admin()).listKb(envOf(ctx));
      ctx.output.list(shapes.KnowledgeBase, bases, renderList);
    });
  kb.command('show <name>')
    .description('show a base and its documents')
    .action(async (name: string) => {
      const ctx = getCtx();
      const shown = await (await admin()).showKb(envOf(ctx), name);
      ctx.output.item(shapes.KbDetail, shown, (s) =>
        [
          `${s.base.id}: version ${s.base.version}, ${s.base.chunk_tokens} tokens a chunk, overlap ${s.base.chunk_overlap}, embeddings ${s.base.embedding_model ?? 'none'}`,
          ...s.documents.map((d) => `  ${d.source}  ${d.chunk_count} chunks  v${d.version}  ${d.content_hash.slice(0, 12)}`),
        ].join('\n'),
      );
    });
  kb.command('rm <name>')
    .description('remove a base with its documents and chunks')
    .action(async (name: string) => {
      const ctx = getCtx();
      ctx.output.item(
        shapes.Removed,
        { ok: true, removed: (await (await admin()).removeKb(envOf(ctx), name)).removed },
        (r) => `removed knowledge base ${r.removed}`,
      );
    });
  kb.command('search <name> <query>')
    .description('retrieve from a base the way knowledge.retrieve does')
    .option('--top-k <n>', `results (default 5, at most ${MAX_TOP_K})`)
    .option('--filter <json>', 'metadata filters: [{"field","operator","value"}] or {"field": value}')
    .option('--rerank-model <id>', 'a configured rerank model that reorders the candidates')
    .action(async (name: string, query: string, raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(
        z.object({ topK: IntFlag.positive().max(MAX_TOP_K).default(5), filter: z.string().optional(), rerankModel: z.string().min(1).optional() }),
        raw,
      );
      let filters;
      try {
        filters = normalizeFilters(f.filter ? parseJsonText(f.filter, '--filter', 'invalid_argument') : {});
      } catch (err) {
        if (err instanceof z.ZodError) throw new LbotError('invalid_argument', `--filter: ${firstIssue(err).text}`);
        throw err;
      }
      const found = await (await admin()).searchKb(envOf(ctx), { name, query, topK: f.topK, filters, rerankModel: f.rerankModel });
      ctx.output.item(shapes.KbSearch, found, renderResults);
    });
}
