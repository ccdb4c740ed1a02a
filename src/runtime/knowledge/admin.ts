// What `lbot kb` does: create, add, list, show, remove, reindex and search knowledge bases in `<data-dir>/lbot.db`
// (or on PostgreSQL with --store).
import type { Config } from '../../core/config.js';
import { LbotError } from '../../core/errors.js';
import type { JsonObject } from '../../core/protocol/event.js';
import type { KnowledgeFilter, KnowledgeBaseInfo, RetrievalEntry } from '../../core/protocol/knowledge.js';
import type { AsyncKnowledgeStore, KbBase, KbDocument } from '../../core/stores/knowledge-types.js';
import { openKnowledge } from '../stores/open.js';
import { createModelProvider } from '../models/providers.js';
import { createKnowledgeEngine, type RetrievalMode } from './engine.js';
import { chunkTokenizer, ingest, type IngestProgress, type IngestSummary } from './ingest.js';

/** A base id: what bindings and runner configs name it by. */
const KB_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export const DEFAULT_CHUNK_TOKENS = 400;
export const DEFAULT_OVERLAP = 50;
export const MAX_CHUNK_TOKENS = 8192;

type Env = { dataDir: string; databaseUrl: string | null; config: Config; signal: AbortSignal };

async function withKnowledge<T>(env: Env, fn: (knowledge: AsyncKnowledgeStore) => Promise<T>): Promise<T> {
  const opened = await openKnowledge(env.dataDir, env.databaseUrl);
  try {
    return await fn(opened.knowledge);
  } finally {
    await opened.close();
  }
}

async function requireBase(knowledge: AsyncKnowledgeStore, name: string): Promise<KbBase> {
  const base = await knowledge.getBase(name);
  if (!base)
    throw new LbotError('kb.not_found', `knowledge base ${name} not found`, { hint: 'create it with `lbot kb create NAME`, list them with `lbot kb list`' });
  return base;
}

function requireModel(config: Config, id: string, type: 'embedding' | 'rerank'): void {
  const model = config.models.find((m) => m.id === id);
  if (!model) throw new LbotError('not_found', `model ${id} is not configured`, { hint: `add it with \`lbot model add ${id} … --type ${type}\`` });
}

export type CreateOptions = { name: string; embeddingModel?: string | undefined; chunkTokens?: number | undefined; overlap?: number | undefined };

export async function createKb(env: Env, o: CreateOptions): Promise<KbBase> {
  if (!KB_NAME.test(o.name)) throw new LbotError('kb.invalid_name', `${JSON.stringify(o.name)}: a knowledge base name is 1–64 letters, digits, _ . -`);
  if (o.embeddingModel) requireModel(env.config, o.embeddingModel, 'embedding');
  const chunk_tokens = o.chunkTokens ?? DEFAULT_CHUNK_TOKENS;
  const chunk_overlap = o.overlap ?? Math.min(DEFAULT_OVERLAP, Math.floor(chunk_tokens / 4));
  if (chunk_tokens < 16 || chunk_tokens > MAX_CHUNK_TOKENS) throw new LbotError('invalid_argument', `--chunk-tokens: between 16 and ${MAX_CHUNK_TOKENS}`);
  if (chunk_overlap < 0 || chunk_overlap * 2 > chunk_tokens)
    throw new LbotError('invalid_argument', '--overlap: at least 0 and at most half of --chunk-tokens');
  if (env.config.knowledge_bases.some((k) => k.id === o.name))
    throw new LbotError('kb.exists', `knowledge base ${o.name} is listed in lbot.config.json`, {
      hint: 'pick another name, or move its documents into files and drop the config entry',
    });
  return await withKnowledge(env, (k) => k.createBase({ id: o.name, name: o.name, embedding_model: o.embeddingModel ?? null, chunk_tokens, chunk_overlap }));
}

export async function addToKb(
  env: Env,
  o: { name: string; paths: readonly string[]; metadata?: JsonObject; reindex?: boolean; onProgress?: (p: IngestProgress) => void },
): Promise<IngestSummary> {
  return await withKnowledge(env, async (k) => {
    const base = await requireBase(k, o.name);
    return await ingest(
      {
        store: k,
        models: createModelProvider(env.config.models),
        base,
        paths: o.paths,
        ...(o.metadata ? { metadata: o.metadata } : {}),
        ...(o.reindex ? { reindex: true } : {}),
        signal: env.signal,
        ...(o.onProgress ? { onProgress: o.onProgress } : {}),
      },
      await chunkTokenizer(),
    );
  });
}

function engineOf(env: Env, knowledge: AsyncKnowledgeStore) {
  return createKnowledgeEngine({ store: knowledge, models: createModelProvider(env.config.models), configBases: env.config.knowledge_bases });
}

export async function listKb(env: Env): Promise<KnowledgeBaseInfo[]> {
  return await withKnowledge(env, (k) => engineOf(env, k).list());
}

export async function showKb(env: Env, name: string): Promise<{ base: KbBase; documents: KbDocument[] }> {
  return await withKnowledge(env, async (k) => ({ base: await requireBase(k, name), documents: await k.documents(name) }));
}

export async function removeKb(env: Env, name: string): Promise<{ removed: string }> {
  return await withKnowledge(env, async (k) => {
    if (!(await k.removeBase(name))) throw new LbotError('kb.not_found', `knowledge base ${name} not found`);
    return { removed: name };
  });
}

export async function searchKb(
  env: Env,
  o: { name: string; query: string; topK: number; filters: KnowledgeFilter[]; rerankModel?: string | undefined },
): Promise<{ kb_id: string; mode: RetrievalMode; results: RetrievalEntry[] }> {
  if (o.rerankModel) requireModel(env.config, o.rerankModel, 'rerank');
  return await withKnowledge(env, async (k) => {
    const engine = engineOf(env, k);
    const results = await engine.retrieve(o.name, {
      query: o.query,
      top_k: o.topK,
      filters: o.filters,
      rerank_model_id: o.rerankModel ?? null,
      deadline_at: null,
      signal: env.signal,
    });
    return { kb_id: o.name, mode: await engine.modeOf(o.name), results };
  });
}
