// The records and answers the proxy methods return (histories, events, artifacts, tool details, model
// replies) and the bounds of model inputs; the method table in proxy.ts names them per method.
import { z } from 'zod';
import { JsonObjectSchema } from './event.js';
import { MessageSchema } from './context.js';

export const LlmToolSpecSchema = z.looseObject({
  name: z.string(),
  description: z.string().default(''),
  human_desc: z.string().optional(),
  parameters: JsonObjectSchema.default({}),
});

export const TranscriptItemSchema = z.strictObject({
  transcript_id: z.string(),
  event_id: z.string(),
  conversation_id: z.string().nullable(),
  thread_id: z.string().nullable(),
  role: z.string(),
  item_type: z.string(),
  content: z.string().nullable(),
  content_json: JsonObjectSchema.nullable(),
  artifact_refs: z.array(JsonObjectSchema),
  seq: z.number().nullable(),
  cursor: z.string().nullable(),
  created_at: z.number().nullable(),
  metadata: JsonObjectSchema,
});
export type TranscriptItem = z.infer<typeof TranscriptItemSchema>;

export const EventRecordSchema = z.strictObject({
  id: z.number(),
  seq: z.number(),
  cursor: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  event_time: z.number().nullable(),
  source: z.string(),
  bot_id: z.string().nullable(),
  workspace_id: z.string().nullable(),
  conversation_id: z.string().nullable(),
  thread_id: z.string().nullable(),
  actor_type: z.string().nullable(),
  actor_id: z.string().nullable(),
  actor_name: z.string().nullable(),
  subject_type: z.string().nullable(),
  subject_id: z.string().nullable(),
  input_summary: z.string().nullable(),
  input_json: JsonObjectSchema.nullable(),
  raw_ref: z.string().nullable(),
  run_id: z.string().nullable(),
  runner_id: z.string().nullable(),
  created_at: z.number().nullable(),
  metadata: JsonObjectSchema,
});
export type EventRecord = z.infer<typeof EventRecordSchema>;

export const ArtifactMetadataSchema = z.strictObject({
  artifact_id: z.string(),
  artifact_type: z.string(),
  mime_type: z.string().nullable(),
  name: z.string().nullable(),
  size_bytes: z.number().nullable(),
  sha256: z.string().nullable(),
  source: z.string(),
  conversation_id: z.string().nullable(),
  run_id: z.string().nullable(),
  runner_id: z.string().nullable(),
  created_at: z.number().nullable(),
  expires_at: z.number().nullable(),
  metadata: JsonObjectSchema,
});
export type ArtifactMetadata = z.infer<typeof ArtifactMetadataSchema>;

export const ArtifactReadResultSchema = z.strictObject({
  artifact_id: z.string(),
  mime_type: z.string().nullable(),
  size_bytes: z.number().nullable(),
  offset: z.number(),
  length: z.number().nullable(),
  content_base64: z.string().nullable(),
  file_key: z.string().nullable(),
  has_more: z.boolean(),
});
export type ArtifactReadResult = z.infer<typeof ArtifactReadResultSchema>;

export const HistoryPageResultSchema = z.strictObject({
  items: z.array(TranscriptItemSchema),
  next_cursor: z.string().nullable(),
  prev_cursor: z.string().nullable(),
  has_more: z.boolean(),
});
export type HistoryPageResult = z.infer<typeof HistoryPageResultSchema>;

export const EventPageResultSchema = z.strictObject({
  items: z.array(EventRecordSchema),
  next_cursor: z.string().nullable(),
  prev_cursor: z.null(),
  has_more: z.boolean(),
});

export const ToolDetailSchema = z.looseObject({
  name: z.string(),
  label: JsonObjectSchema.default({}),
  description: z.string(),
  human_desc: z.string().default(''),
  parameters: JsonObjectSchema,
  spec: JsonObjectSchema.default({}),
});

/** Upper bounds of model call inputs a runner sends (characters per text, inputs per embed call). */
export const MAX_MODEL_TEXT = 1_000_000;
export const MAX_EMBED_INPUTS = 256;

export const ModelUsageSchema = z.looseObject({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
});
export type ModelUsage = z.infer<typeof ModelUsageSchema>;

/** The answer of models.invoke / models.stream: the message plus what the upstream reported. */
export const ModelReplySchema = z.looseObject({
  message: MessageSchema,
  usage: ModelUsageSchema.nullable().default(null),
  finish_reason: z.string().nullable().default(null),
  model: z.string().nullable().default(null),
  /** The context of this call's messages, when it continued one or asked to keep one (docs/protocol.md "Model contexts"). */
  context_id: z.string().optional(),
});
export type ModelReply = z.infer<typeof ModelReplySchema>;
