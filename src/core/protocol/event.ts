// The event envelope and the sub-models it shares with the run context (runner-protocol.md §3.1).
import { z } from 'zod';

export const JsonObjectSchema = z.record(z.string(), z.unknown());
export type JsonObject = z.infer<typeof JsonObjectSchema>;

export const EVENT_SOURCES = ['platform', 'webui', 'api', 'scheduler', 'system', 'pipeline_adapter'] as const;
export const EventSourceSchema = z.enum(EVENT_SOURCES);
export type EventSource = z.infer<typeof EventSourceSchema>;

export const RESERVED_EVENT_TYPES = [
  'message.received',
  'message.recalled',
  'group.member_joined',
  'friend.request_received',
  'schedule.triggered',
  'api.invoked',
] as const;

export const ActorSchema = z.looseObject({
  actor_type: z.string().min(1),
  actor_id: z.string().nullable().default(null),
  actor_name: z.string().nullable().default(null),
  metadata: JsonObjectSchema.default({}),
});
export type Actor = z.infer<typeof ActorSchema>;

export const SubjectSchema = z.looseObject({
  subject_type: z.string().min(1),
  subject_id: z.string().nullable().default(null),
  data: JsonObjectSchema.default({}),
});
export type Subject = z.infer<typeof SubjectSchema>;

export const RawEventRefSchema = z.looseObject({
  artifact_id: z.string().nullable().default(null),
  storage_key: z.string().nullable().default(null),
});
export type RawEventRef = z.infer<typeof RawEventRefSchema>;

export const ContentElementSchema = z.looseObject({
  type: z.string().min(1),
  text: z.string().nullable().optional(),
  image_url: z.looseObject({ url: z.string() }).nullable().optional(),
  image_base64: z.string().nullable().optional(),
  file_url: z.string().nullable().optional(),
  file_base64: z.string().nullable().optional(),
  file_name: z.string().nullable().optional(),
});
export type ContentElement = z.infer<typeof ContentElementSchema>;

export const ArtifactRefSchema = z.looseObject({
  artifact_id: z.string().min(1),
  artifact_type: z.string().nullable().optional(),
  mime_type: z.string().nullable().optional(),
  size: z.number().nullable().optional(),
  name: z.string().nullable().optional(),
  source: z.string().nullable().optional(),
  url: z.string().nullable().optional(),
  content: z.string().nullable().optional(),
  id: z.string().nullable().optional(),
});
export type ArtifactRef = z.infer<typeof ArtifactRefSchema>;

export const InputSchema = z.looseObject({
  text: z.string().nullable().default(null),
  contents: z.array(ContentElementSchema).default([]),
  attachments: z.array(ArtifactRefSchema).default([]),
  message_chain: z
    .union([JsonObjectSchema, z.array(JsonObjectSchema)])
    .nullable()
    .default(null),
});
export type Input = z.infer<typeof InputSchema>;

export const DeliverySchema = z.looseObject({
  surface: z.string().min(1),
  reply_target: JsonObjectSchema.nullable().default(null),
  supports_streaming: z.boolean().default(false),
  supports_edit: z.boolean().default(false),
  supports_reaction: z.boolean().default(false),
  max_message_size: z.number().int().positive().nullable().default(null),
  platform_capabilities: JsonObjectSchema.default({}),
});
export type Delivery = z.infer<typeof DeliverySchema>;

/** `AgentEventEnvelope`: the normalized incoming event. Unknown top-level keys are refused. */
export const EventEnvelopeSchema = z.strictObject({
  event_id: z.string().min(1),
  event_type: z.string().min(1),
  event_time: z.number().nullable().default(null),
  source: EventSourceSchema,
  source_event_type: z.string().nullable().default(null),
  bot_id: z.string().nullable().default(null),
  workspace_id: z.string().nullable().default(null),
  conversation_id: z.string().nullable().default(null),
  thread_id: z.string().nullable().default(null),
  actor: ActorSchema.nullable().default(null),
  subject: SubjectSchema.nullable().default(null),
  input: InputSchema,
  delivery: DeliverySchema,
  raw_ref: RawEventRefSchema.nullable().default(null),
  data: JsonObjectSchema.default({}),
});
export type EventEnvelope = z.infer<typeof EventEnvelopeSchema>;
export type EventEnvelopeInput = z.input<typeof EventEnvelopeSchema>;

/** Default cap on the serialized `data` of an envelope (runner-protocol.md §3.1, AC-193). */
export const MAX_EVENT_DATA_BYTES = 1024 * 1024;
