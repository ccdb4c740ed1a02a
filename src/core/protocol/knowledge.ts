// The wire shapes of knowledge retrieval (runner-protocol.md §7.4): metadata filters, a retrieval entry, a listed base.
import { z } from 'zod';
import { isRecord } from '../json.js';
import { JsonObjectSchema } from './event.js';

/** A metadata field name: letters, digits, `_`, `-` and `.` (a dotted path into nested metadata). */
export const MetadataFieldSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'a metadata field is letters, digits, _ and -, dot-separated');

const Scalar = z.union([z.string().max(4096), z.number(), z.boolean(), z.null()]);

export const FILTER_OPERATORS = ['eq', 'neq', 'in', 'nin', 'prefix', 'contains', 'gt', 'gte', 'lt', 'lte', 'exists'] as const;

/** One condition on a document's metadata; all conditions of a query must hold. */
export const KnowledgeFilterSchema = z
  .strictObject({
    field: MetadataFieldSchema,
    operator: z.enum(FILTER_OPERATORS).default('eq'),
    value: z.union([Scalar, z.array(Scalar).max(256)]).default(null),
  })
  .superRefine((f, ctx) => {
    const list = Array.isArray(f.value);
    if ((f.operator === 'in' || f.operator === 'nin') !== list)
      ctx.addIssue({ code: 'custom', path: ['value'], message: list ? `${f.operator} takes one value, not a list` : `${f.operator} takes a list of values` });
    if ((f.operator === 'prefix' || f.operator === 'contains') && typeof f.value !== 'string' && typeof f.value !== 'number')
      ctx.addIssue({ code: 'custom', path: ['value'], message: `${f.operator} takes a string` });
    if (['gt', 'gte', 'lt', 'lte'].includes(f.operator) && typeof f.value !== 'string' && typeof f.value !== 'number')
      ctx.addIssue({ code: 'custom', path: ['value'], message: `${f.operator} takes a number or a string` });
  });
export type KnowledgeFilter = z.infer<typeof KnowledgeFilterSchema>;

/** Bounds of one retrieval: the query text (characters) and the number of results. */
export const MAX_QUERY_TEXT = 8192;
export const MAX_TOP_K = 100;

/** At most this many conditions in one query (each becomes a SQL predicate). */
export const MAX_FILTERS = 32;

/**
 * `filters` of knowledge.retrieve, in the forms callers send: `{}` (none), a list of conditions,
 * `{conditions: [...]}`, one condition `{field, operator, value}`, or a map `{field: value}` (equality each).
 */
export const KnowledgeFiltersParamSchema = z.union([z.array(z.unknown()).max(MAX_FILTERS), JsonObjectSchema]).default({});

/** Normalizes any accepted `filters` form into conditions; throws the zod error of the first bad one. */
export function normalizeFilters(raw: unknown): KnowledgeFilter[] {
  const list = z.array(KnowledgeFilterSchema).max(MAX_FILTERS);
  if (Array.isArray(raw)) return list.parse(raw);
  if (!isRecord(raw)) return [];
  const obj = raw;
  if (Array.isArray(obj.conditions)) return list.parse(obj.conditions);
  if (typeof obj.field === 'string' && ('operator' in obj || 'value' in obj)) return list.parse([obj]);
  const entries = Object.entries(obj);
  return list.parse(entries.map(([field, value]) => ({ field, operator: Array.isArray(value) ? 'in' : 'eq', value })));
}

/** One retrieved chunk. `content` and `document_id` keep the shape LangBot's LocalAgent reads (`pkg/rag.py`). */
export const RetrievalEntrySchema = z.looseObject({
  kb_id: z.string(),
  document_id: z.string(),
  chunk_id: z.string(),
  score: z.number(),
  text: z.string(),
  content: z.string(),
  metadata: JsonObjectSchema,
});
export type RetrievalEntry = z.infer<typeof RetrievalEntrySchema>;

/** A base as `knowledge.list` and `lbot kb list` show it. */
export const KnowledgeBaseInfoSchema = z.looseObject({
  kb_id: z.string(),
  kb_name: z.string().nullable(),
  kb_type: z.string().nullable(),
  /** Where the base lives: `store` (built with `lbot kb`) or `config` (documents in lbot.config.json). */
  origin: z.enum(['store', 'config']),
  embedding_model: z.string().nullable(),
  documents: z.number().int().nonnegative(),
  chunks: z.number().int().nonnegative(),
  version: z.number().int().nonnegative(),
});
export type KnowledgeBaseInfo = z.infer<typeof KnowledgeBaseInfoSchema>;
