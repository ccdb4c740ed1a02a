// The proxy API method table: every plugin → host request, its params, result and required grant
// (runner-protocol.md §6.3, §7). Router, authorizer, SDK client and docs all derive from this table.
import { z } from 'zod';
import { ErrorValueSchema } from './error-value.js';
import { JsonObjectSchema } from './event.js';
import { MessageChunkSchema, MessageSchema } from './context.js';
import { STATE_SCOPES } from './binding.js';
export * from './proxy-results.js';
import {
  ArtifactMetadataSchema,
  ArtifactReadResultSchema,
  EventPageResultSchema,
  EventRecordSchema,
  HistoryPageResultSchema,
  LlmToolSpecSchema,
  MAX_EMBED_INPUTS,
  MAX_MODEL_TEXT,
  ModelReplySchema,
  ModelUsageSchema,
  ToolDetailSchema,
  TranscriptItemSchema,
} from './proxy-results.js';
import { KnowledgeBaseInfoSchema, KnowledgeFiltersParamSchema, MAX_QUERY_TEXT, MAX_TOP_K, RetrievalEntrySchema } from './knowledge.js';

export const API_ERROR_CODES = [
  'unauthorized',
  'not_found',
  'deadline_exceeded',
  'payload_too_large',
  'rate_limited',
  'invalid_argument',
  'runtime_error',
] as const;
export const ApiErrorCodeSchema = z.enum(API_ERROR_CODES);
export type ApiErrorCode = z.infer<typeof ApiErrorCodeSchema>;

/** `AgentAPIError`: the `data` of a JSON-RPC -32000 error answered to a runner (§7.1). */
export const AgentApiErrorSchema = z.strictObject({
  ...ErrorValueSchema.shape,
  code: ApiErrorCodeSchema,
  retryable: z.boolean().default(false),
  details: JsonObjectSchema.default({}),
});
export type AgentApiError = z.infer<typeof AgentApiErrorSchema>;

const RunIdParam = { run_id: z.string().min(1, 'run_id is required') };
const Cursor = z.string().regex(/^\d+$/, 'cursor must be a decimal sequence number');
/** A bare scope name; anything else is answered with invalid_argument/bad_scope (AC-054). */
const ScopeParam = z.enum(STATE_SCOPES, { message: `scope must be one of ${STATE_SCOPES.join(', ')}` });
const StateKey = z.string().min(1, 'key is required').max(255, 'state keys are at most 255 characters');
const StorageArea = z.enum(['plugin', 'workspace', 'binding']);

const ModelCallParams = {
  ...RunIdParam,
  model_id: z.string().min(1),
  messages: z.array(MessageSchema),
  tools: z.array(LlmToolSpecSchema).default([]),
  extra_args: JsonObjectSchema.default({}),
  /** Overrides the model's configured `remove_think` for this call (§7.2). */
  remove_think: z.boolean().optional(),
  /** `messages` continue the context an earlier call of this run answered (docs/protocol.md "Model contexts"). */
  context_id: z.string().min(1).max(64).optional(),
  /** Answer a `context_id` for this call's whole message list (implied by `context_id`). */
  keep_context: z.boolean().optional(),
};

/** A manifest grant: `[group, operation]`; state has none (§6.6), storage and files are checked as resources. */
type Grant = readonly [group: 'models' | 'tools' | 'knowledge_bases' | 'history' | 'events' | 'artifacts', op: string];

export type ProxyMethodSpec = {
  params: z.ZodType;
  result: z.ZodType;
  /** Manifest permission checked at call time (lbot's strict rule, §6.3). */
  permission: Grant | null;
  /** The audit's resource kind; also selects validator A (resources) or B (run APIs). */
  resource: 'model' | 'tool' | 'knowledge_base' | 'knowledge_bases' | 'storage' | 'file' | 'history' | 'event' | 'artifact' | 'state' | 'platform';
  /** Default timeout of the SDK client, in seconds (§6.7). */
  timeout_s: number;
};

export const proxyMethods = {
  'models.invoke': {
    params: z.looseObject(ModelCallParams),
    result: ModelReplySchema,
    permission: ['models', 'invoke'],
    resource: 'model',
    timeout_s: 120,
  },
  'models.stream': {
    params: z.looseObject({ ...ModelCallParams, stream_id: z.string().optional() }),
    result: ModelReplySchema,
    permission: ['models', 'stream'],
    resource: 'model',
    timeout_s: 120,
  },
  'models.rerank': {
    params: z.looseObject({
      ...RunIdParam,
      model_id: z.string().min(1),
      query: z.string().max(MAX_MODEL_TEXT),
      documents: z.array(z.string().max(MAX_MODEL_TEXT)),
      top_k: z.number().int().positive().nullable().optional(),
    }),
    result: z.looseObject({ results: z.array(z.looseObject({ index: z.number(), relevance_score: z.number() })) }),
    permission: ['models', 'rerank'],
    resource: 'model',
    timeout_s: 30,
  },
  'models.count_tokens': {
    params: z.looseObject({
      ...RunIdParam,
      model_id: z.string().min(1),
      messages: z.array(MessageSchema).default([]),
      text: z.string().max(MAX_MODEL_TEXT).optional(),
      tools: z.array(LlmToolSpecSchema).default([]),
    }),
    result: z.looseObject({ tokens: z.number().int().nonnegative(), context_window: z.number().int().positive().nullable(), tokenizer: z.string() }),
    permission: ['models', 'count_tokens'],
    resource: 'model',
    timeout_s: 15,
  },
  'models.embed': {
    params: z.looseObject({ ...RunIdParam, model_id: z.string().min(1), input: z.array(z.string().max(MAX_MODEL_TEXT)).min(1).max(MAX_EMBED_INPUTS) }),
    result: z.looseObject({ embeddings: z.array(z.array(z.number())), model: z.string().nullable(), usage: ModelUsageSchema.nullable() }),
    permission: ['models', 'embed'],
    resource: 'model',
    timeout_s: 30,
  },
  'tools.get_detail': {
    params: z.looseObject({ ...RunIdParam, tool_name: z.string().min(1) }),
    result: z.looseObject({ tool: ToolDetailSchema }),
    permission: ['tools', 'detail'],
    resource: 'tool',
    timeout_s: 30,
  },
  'tools.call': {
    params: z.looseObject({ ...RunIdParam, tool_name: z.string().min(1), parameters: JsonObjectSchema.default({}) }),
    result: z.looseObject({ result: z.unknown(), tool_response: z.unknown() }),
    permission: ['tools', 'call'],
    resource: 'tool',
    timeout_s: 180,
  },
  'knowledge.list': {
    params: z.looseObject({ ...RunIdParam }),
    result: z.looseObject({ knowledge_bases: z.array(KnowledgeBaseInfoSchema) }),
    permission: ['knowledge_bases', 'list'],
    resource: 'knowledge_bases',
    timeout_s: 15,
  },
  'knowledge.retrieve': {
    params: z.looseObject({
      ...RunIdParam,
      kb_id: z.string().min(1),
      query_text: z.string().max(MAX_QUERY_TEXT),
      top_k: z.number().int().positive().max(MAX_TOP_K).default(5),
      filters: KnowledgeFiltersParamSchema,
      /** A granted rerank model that reorders the fused candidates (lbot extension). */
      rerank_model_id: z.string().min(1).nullable().optional(),
    }),
    result: z.looseObject({ results: z.array(RetrievalEntrySchema) }),
    permission: ['knowledge_bases', 'retrieve'],
    resource: 'knowledge_base',
    timeout_s: 30,
  },
  'history.page': {
    params: z.looseObject({
      ...RunIdParam,
      conversation_id: z.string().nullable().optional(),
      before_cursor: Cursor.nullable().optional(),
      after_cursor: Cursor.nullable().optional(),
      limit: z.number().int().default(50),
      direction: z.enum(['backward', 'forward']).default('backward'),
      include_artifacts: z.boolean().default(false),
    }),
    result: HistoryPageResultSchema,
    permission: ['history', 'page'],
    resource: 'history',
    timeout_s: 30,
  },
  'history.search': {
    params: z.looseObject({
      ...RunIdParam,
      query: z.string().default(''),
      filters: z
        .looseObject({ conversation_id: z.string().nullable().optional(), roles: z.array(z.string()).optional(), item_types: z.array(z.string()).optional() })
        .default({}),
      top_k: z.number().int().default(10),
    }),
    result: z.strictObject({ items: z.array(TranscriptItemSchema), total_count: z.number(), query: z.string() }),
    permission: ['history', 'search'],
    resource: 'history',
    timeout_s: 30,
  },
  'events.get': {
    params: z.looseObject({ ...RunIdParam, event_id: z.string().min(1) }),
    result: EventRecordSchema,
    permission: ['events', 'get'],
    resource: 'event',
    timeout_s: 15,
  },
  'events.page': {
    params: z.looseObject({
      ...RunIdParam,
      conversation_id: z.string().nullable().optional(),
      event_types: z.array(z.string()).nullable().optional(),
      before_cursor: Cursor.nullable().optional(),
      limit: z.number().int().default(50),
    }),
    result: EventPageResultSchema,
    permission: ['events', 'page'],
    resource: 'event',
    timeout_s: 30,
  },
  'artifacts.metadata': {
    params: z.looseObject({ ...RunIdParam, artifact_id: z.string().min(1) }),
    result: ArtifactMetadataSchema,
    permission: ['artifacts', 'metadata'],
    resource: 'artifact',
    timeout_s: 15,
  },
  'artifacts.read_range': {
    params: z.looseObject({
      ...RunIdParam,
      artifact_id: z.string().min(1),
      offset: z.number().int().min(0, 'offset must be >= 0').default(0),
      length: z.number().int().positive('length must be > 0').nullable().optional(),
    }),
    result: ArtifactReadResultSchema,
    permission: ['artifacts', 'read'],
    resource: 'artifact',
    timeout_s: 60,
  },
  'state.get': {
    params: z.looseObject({ ...RunIdParam, scope: ScopeParam, key: StateKey }),
    result: z.strictObject({ value: z.unknown() }),
    permission: null,
    resource: 'state',
    timeout_s: 15,
  },
  'state.set': {
    params: z.looseObject({ ...RunIdParam, scope: ScopeParam, key: StateKey, value: z.unknown() }),
    result: z.strictObject({ success: z.literal(true) }),
    permission: null,
    resource: 'state',
    timeout_s: 15,
  },
  'state.delete': {
    params: z.looseObject({ ...RunIdParam, scope: ScopeParam, key: StateKey }),
    result: z.strictObject({ success: z.boolean() }),
    permission: null,
    resource: 'state',
    timeout_s: 15,
  },
  'state.list': {
    params: z.looseObject({ ...RunIdParam, scope: ScopeParam, prefix: z.string().nullable().optional(), limit: z.unknown().optional() }),
    result: z.strictObject({ keys: z.array(z.string()), has_more: z.boolean() }),
    permission: null,
    resource: 'state',
    timeout_s: 15,
  },
  'storage.get': {
    params: z.looseObject({ ...RunIdParam, area: StorageArea, key: z.string().min(1).max(255) }),
    result: z.strictObject({ value_base64: z.string() }),
    permission: null,
    resource: 'storage',
    timeout_s: 15,
  },
  'storage.set': {
    params: z.looseObject({ ...RunIdParam, area: StorageArea, key: z.string().min(1).max(255), value_base64: z.base64() }),
    result: z.strictObject({ success: z.literal(true) }),
    permission: null,
    resource: 'storage',
    timeout_s: 15,
  },
  'storage.delete': {
    params: z.looseObject({ ...RunIdParam, area: StorageArea, key: z.string().min(1).max(255) }),
    result: z.strictObject({ success: z.boolean() }),
    permission: null,
    resource: 'storage',
    timeout_s: 15,
  },
  'storage.list': {
    params: z.looseObject({ ...RunIdParam, area: StorageArea, prefix: z.string().nullable().optional() }),
    result: z.strictObject({ keys: z.array(z.string()) }),
    permission: null,
    resource: 'storage',
    timeout_s: 15,
  },
  'files.get': {
    params: z.looseObject({ ...RunIdParam, file_key: z.string().min(1) }),
    result: z.strictObject({ file_base64: z.string() }),
    permission: null,
    resource: 'file',
    timeout_s: 15,
  },
  'platform.request_action': {
    params: z.looseObject({
      ...RunIdParam,
      action: z.string().min(1),
      target: JsonObjectSchema.nullable().default(null),
      payload: JsonObjectSchema.nullable().default(null),
    }),
    result: JsonObjectSchema,
    permission: null,
    resource: 'platform',
    timeout_s: 15,
  },
} as const satisfies Record<string, ProxyMethodSpec>;

export type ProxyMethod = keyof typeof proxyMethods;
export type ProxyParams<M extends ProxyMethod> = z.output<(typeof proxyMethods)[M]['params']>;
export type ProxyParamsInput<M extends ProxyMethod> = z.input<(typeof proxyMethods)[M]['params']>;
export type ProxyResult<M extends ProxyMethod> = z.output<(typeof proxyMethods)[M]['result']>;

export const PROXY_METHODS = Object.keys(proxyMethods) as ProxyMethod[];

export function isProxyMethod(method: string): method is ProxyMethod {
  return Object.hasOwn(proxyMethods, method);
}

/** Chunk notification of a streamed model call (`models.stream/chunk`). */
export const ModelStreamChunkSchema = z.strictObject({
  run_id: z.string(),
  stream_id: z.string(),
  chunk: MessageChunkSchema,
});
