// `AgentRunContext` and its sub-models, plus the Message shapes shared with results (runner-protocol.md §4).
import { z } from 'zod';
import {
  ActorSchema,
  ArtifactRefSchema,
  ContentElementSchema,
  DeliverySchema,
  EventSourceSchema,
  InputSchema,
  JsonObjectSchema,
  RawEventRefSchema,
  SubjectSchema,
} from './event.js';

export const ToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.string().default('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const MessageSchema = z.looseObject({
  role: z.string().min(1),
  name: z.string().nullable().optional(),
  content: z
    .union([z.string(), z.array(ContentElementSchema)])
    .nullable()
    .optional(),
  tool_calls: z.array(ToolCallSchema).nullable().optional(),
  tool_call_id: z.string().nullable().optional(),
  resp_message_id: z.string().nullable().optional(),
  provider_specific_fields: JsonObjectSchema.nullable().optional(),
  artifact_refs: z.array(JsonObjectSchema).optional(),
});
export type Message = z.infer<typeof MessageSchema>;

export const MessageChunkSchema = MessageSchema.omit({ artifact_refs: true }).extend({
  all_content: z.string().nullable().optional(),
  is_final: z.boolean().default(false),
  msg_sequence: z.number().default(0),
});
export type MessageChunk = z.infer<typeof MessageChunkSchema>;

export const TriggerSchema = z.looseObject({
  type: z.string(),
  source: EventSourceSchema,
  timestamp: z.number(),
});

export const EventContextSchema = z.looseObject({
  event_id: z.string(),
  event_type: z.string(),
  event_time: z.number().nullable(),
  source: EventSourceSchema,
  source_event_type: z.string().nullable(),
  raw_ref: RawEventRefSchema.nullable(),
  data: JsonObjectSchema,
});

export const ConversationContextSchema = z.looseObject({
  conversation_id: z.string().nullable(),
  thread_id: z.string().nullable(),
  launcher_type: z.string().nullable(),
  launcher_id: z.string().nullable(),
  sender_id: z.string().nullable(),
  bot_id: z.string().nullable(),
  workspace_id: z.string().nullable(),
  session_id: z.string().nullable(),
  pipeline_uuid: z.string().nullable().optional(),
});
export type ConversationContext = z.infer<typeof ConversationContextSchema>;

export const ModelResourceSchema = z.strictObject({
  model_id: z.string(),
  model_type: z.string().nullable(),
  provider: z.string().nullable(),
});
export const ToolResourceSchema = z.strictObject({
  tool_name: z.string(),
  tool_type: z.string().nullable(),
  description: z.string().nullable(),
});
export const KnowledgeBaseResourceSchema = z.strictObject({
  kb_id: z.string(),
  kb_name: z.string().nullable(),
  kb_type: z.string().nullable(),
});
export const FileResourceSchema = z.strictObject({
  file_id: z.string(),
  file_name: z.string().nullable(),
  mime_type: z.string().nullable(),
  source: z.string().nullable(),
});

export const ResourcesSchema = z.strictObject({
  models: z.array(ModelResourceSchema),
  tools: z.array(ToolResourceSchema),
  knowledge_bases: z.array(KnowledgeBaseResourceSchema),
  files: z.array(FileResourceSchema),
  storage: z.strictObject({ plugin_storage: z.boolean(), workspace_storage: z.boolean() }),
  platform_capabilities: JsonObjectSchema,
});
export type Resources = z.infer<typeof ResourcesSchema>;

export const AvailableApisSchema = z.strictObject({
  history_page: z.boolean(),
  history_search: z.boolean(),
  event_get: z.boolean(),
  event_page: z.boolean(),
  artifact_metadata: z.boolean(),
  artifact_read: z.boolean(),
  state: z.boolean(),
  storage: z.boolean(),
  prompt_get: z.literal(false),
});
export type AvailableApis = z.infer<typeof AvailableApisSchema>;

export const InlinePolicySchema = z.strictObject({
  mode: z.enum(['none', 'current_event', 'recent_tail', 'summary_tail']),
  delivered_count: z.number(),
  source_total_count: z.number().nullable(),
  messages_complete: z.boolean(),
  reason: z.string().nullable(),
});

export const ContextAccessSchema = z.strictObject({
  conversation_id: z.string().nullable(),
  thread_id: z.string().nullable(),
  latest_cursor: z.string().nullable(),
  event_seq: z.number().nullable(),
  transcript_seq: z.number().nullable(),
  has_history_before: z.boolean(),
  inline_policy: InlinePolicySchema,
  available_apis: AvailableApisSchema,
});
export type ContextAccess = z.infer<typeof ContextAccessSchema>;

export const RunStateSchema = z.strictObject({
  conversation: JsonObjectSchema,
  actor: JsonObjectSchema,
  subject: JsonObjectSchema,
  runner: JsonObjectSchema,
});
export type RunState = z.infer<typeof RunStateSchema>;

export const RuntimeContextSchema = z.looseObject({
  langbot_version: z.string().nullable(),
  sdk_protocol_version: z.string(),
  query_id: z.number().nullable(),
  trace_id: z.string().nullable(),
  deadline_at: z.number().nullable(),
  metadata: JsonObjectSchema,
  host: z.string().optional(),
});
export type RuntimeContext = z.infer<typeof RuntimeContextSchema>;

export const AdapterContextSchema = z.looseObject({
  query_id: z.number().nullable(),
  pipeline_uuid: z.string().nullable().optional(),
  extra: JsonObjectSchema,
});

export const BootstrapSchema = z.looseObject({
  messages: z.array(MessageSchema),
  summary: z.string().nullable(),
  artifacts: z.array(ArtifactRefSchema),
  metadata: JsonObjectSchema,
});

/** The context a runner receives for one run. */
export const RunContextSchema = z.looseObject({
  run_id: z.string().min(1),
  trigger: TriggerSchema,
  event: EventContextSchema,
  conversation: ConversationContextSchema.nullable(),
  actor: ActorSchema.nullable(),
  subject: SubjectSchema.nullable(),
  input: InputSchema,
  delivery: DeliverySchema,
  resources: ResourcesSchema,
  context: ContextAccessSchema,
  state: RunStateSchema,
  runtime: RuntimeContextSchema,
  config: JsonObjectSchema,
  bootstrap: BootstrapSchema.nullable(),
  adapter: AdapterContextSchema,
  metadata: JsonObjectSchema,
});
export type RunContext = z.infer<typeof RunContextSchema>;
