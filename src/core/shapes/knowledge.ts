// Shapes of `lbot kb …`: bases, their documents, ingestion progress and summaries, retrieval answers.
import { z } from 'zod';
import { JsonObjectSchema } from '../protocol/event.js';
import { KnowledgeBaseInfoSchema, RetrievalEntrySchema } from '../protocol/knowledge.js';
import { defineShape } from './shape.js';

const KbBaseSchema = z.strictObject({
  id: z.string(),
  name: z.string().nullable(),
  embedding_model: z.string().nullable(),
  embedding_dims: z.number().int().nullable(),
  chunk_tokens: z.number().int(),
  chunk_overlap: z.number().int(),
  version: z.number().int(),
  created_at: z.number(),
  updated_at: z.number(),
});

export const KnowledgeBase = defineShape('KnowledgeBase', 'item', 'a knowledge base as `kb list` shows it (stored or config-listed)', KnowledgeBaseInfoSchema);
export const KbCreated = defineShape('KbCreated', 'item', 'a knowledge base `kb create` made', KbBaseSchema);
export const KbDetail = defineShape(
  'KbDetail',
  'item',
  'one base and its documents (`kb show`)',
  z.strictObject({
    base: KbBaseSchema,
    documents: z.array(
      z.strictObject({
        source: z.string(),
        origin: z.string(),
        content_hash: z.string(),
        metadata: JsonObjectSchema,
        version: z.number().int(),
        bytes: z.number().int(),
        chunk_count: z.number().int(),
        updated_at: z.number(),
      }),
    ),
  }),
);

export const KbIngestion = defineShape(
  'KbIngestion',
  'item',
  'what `kb add` / `kb reindex` did; `ok` is false when a file failed',
  z.strictObject({
    ok: z.boolean(),
    kb_id: z.string(),
    version: z.number().int(),
    files: z.number().int(),
    indexed: z.number().int(),
    unchanged: z.number().int(),
    removed: z.number().int(),
    failed: z.number().int(),
    chunks: z.number().int(),
    embedding_batches: z.number().int(),
    failures: z.array(z.strictObject({ source: z.string(), code: z.string(), message: z.string() })),
  }),
);

export const KbProgress = defineShape(
  'KbProgress',
  'stream',
  'a progress line of `kb add` / `kb reindex` on stderr with --json',
  z.strictObject({
    progress: z.discriminatedUnion('type', [
      z.strictObject({ type: z.literal('scan'), files: z.number().int() }),
      z.strictObject({
        type: z.literal('file'),
        index: z.number().int(),
        total: z.number().int(),
        source: z.string(),
        status: z.enum(['indexed', 'unchanged', 'failed']),
        chunks: z.number().int(),
        error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
      }),
      z.strictObject({ type: z.literal('embed'), source: z.string(), batch: z.number().int(), batches: z.number().int() }),
      z.strictObject({ type: z.literal('removed'), source: z.string() }),
    ]),
  }),
);

export const KbSearch = defineShape(
  'KbSearch',
  'item',
  'the answer of one query (`kb search`): the retrieval mode it ran in and the entries, best first',
  z.strictObject({ kb_id: z.string(), mode: z.string(), results: z.array(RetrievalEntrySchema) }),
);
