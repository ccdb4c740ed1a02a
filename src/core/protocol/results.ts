// The result stream: `AgentRunResult` and the data payload of each type (runner-protocol.md §5.1).
import { z } from 'zod';
import { JsonObjectSchema } from './event.js';
import { MessageChunkSchema, MessageSchema } from './context.js';
import { StateScopeSchema } from './binding.js';

export const RESULT_TYPES = [
  'message.delta',
  'message.completed',
  'tool.call.started',
  'tool.call.completed',
  'state.updated',
  'artifact.created',
  'action.requested',
  'run.completed',
  'run.failed',
] as const;
export type ResultType = (typeof RESULT_TYPES)[number];
export const TERMINAL_RESULT_TYPES: readonly ResultType[] = ['run.completed', 'run.failed'];

export function isKnownResultType(type: string): type is ResultType {
  return (RESULT_TYPES as readonly string[]).includes(type);
}

/** The envelope of one result as it arrives; `type` is checked separately to name the problem. */
export const RunResultSchema = z.looseObject({
  run_id: z.string().nullable().optional(),
  type: z.string().optional(),
  data: JsonObjectSchema.default({}),
  sequence: z.number().nullable().optional(),
  timestamp: z.number().nullable().optional(),
});
export type RunResult = z.infer<typeof RunResultSchema>;

export const MessageDeltaDataSchema = z.looseObject({ chunk: MessageChunkSchema });
export const MessageCompletedDataSchema = z.looseObject({ message: MessageSchema });
export const ToolCallStartedDataSchema = z.looseObject({
  tool_call_id: z.string().optional(),
  tool_name: z.string(),
  parameters: JsonObjectSchema.default({}),
});
export const ToolCallCompletedDataSchema = z.looseObject({
  tool_call_id: z.string().optional(),
  tool_name: z.string(),
  result: z.unknown().optional(),
  error: z.string().nullable().optional(),
});
export const StateUpdatedDataSchema = z.looseObject({
  scope: z.string().min(1, 'state.updated requires a scope'),
  key: z.string().min(1, 'state.updated requires a key'),
  value: z.unknown(),
});
export const ArtifactCreatedDataSchema = z.looseObject({
  artifact_id: z.string().min(1).optional(),
  artifact_type: z.string().min(1, 'artifact.created requires artifact_type'),
  mime_type: z
    .string()
    .regex(/^[\w.+-]+\/[\w.+-]+$/, 'mime_type must look like type/subtype')
    .optional(),
  name: z.string().optional(),
  size_bytes: z.number().int().nonnegative().optional(),
  sha256: z.string().optional(),
  metadata: JsonObjectSchema.optional(),
  content_base64: z.string().optional(),
});
export const ActionRequestedDataSchema = z.looseObject({
  action: z.string().min(1),
  target: JsonObjectSchema.nullable().default(null),
  payload: JsonObjectSchema.nullable().default(null),
});
export const RunCompletedDataSchema = z.looseObject({
  finish_reason: z.string().default('stop'),
  message: MessageSchema.optional(),
});
export const RunFailedDataSchema = z.looseObject({
  error: z.string().optional(),
  message: z.string().optional(),
  code: z.string().optional(),
  retryable: z.boolean().default(false),
});

export { StateScopeSchema };

/** Max serialized size of one result item, in UTF-8 bytes (§5.3). */
export const MAX_RESULT_BYTES = 1024 * 1024;
/** Oversized message content is cut to this many characters plus TRUNCATION_MARKER. */
export const TRUNCATED_CONTENT_CHARS = 10_000;
export const TRUNCATION_MARKER = '...[truncated]';
/** Max decoded inline content of `artifact.created` (§5.6). */
export const MAX_ARTIFACT_INLINE_BYTES = 1024 * 1024;
