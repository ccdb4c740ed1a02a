// The frames of LangBot's plugin wire (docs/langbot-plugins.md): requests, responses and the
// chunk lines that carry a message over 16 KiB, with the limits both ends enforce.
import { z } from 'zod';
import { JsonObjectSchema } from '../event.js';

/** A message whose JSON text is longer than this (UTF-8 bytes) is sent as chunk lines. */
export const LANGBOT_CHUNK_BYTES = 16 * 1024;
/** The plugin's readline limit: a longer line makes it drop the connection, so the host never writes one. */
export const LANGBOT_PLUGIN_LINE_LIMIT = 64 * 1024;
/**
 * What the host reads in one line. The SDK's chunk lines carry 16 KiB of JSON text re-escaped inside a
 * JSON string (up to 7 bytes per byte for control characters), so its lines can exceed 64 KiB.
 */
export const LANGBOT_HOST_LINE_LIMIT = 128 * 1024;
/** Caps of one reassembled message. */
export const LANGBOT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
export const LANGBOT_MAX_FRAGMENTS = 4096;
/** Error messages the SDK sends are cut here. */
export const LANGBOT_MAX_ERROR_MESSAGE = 4096;

export const LangbotRequestSchema = z.looseObject({
  seq_id: z.number().int(),
  action: z.string().min(1).max(200),
  data: JsonObjectSchema.default({}),
  context: JsonObjectSchema.nullable().optional(),
});
export type LangbotRequest = z.infer<typeof LangbotRequestSchema>;

export const ChunkStatusSchema = z.enum(['continue', 'end']);

export const LangbotResponseSchema = z.looseObject({
  seq_id: z.number().int(),
  code: z.number().int(),
  message: z.string().default(''),
  data: z.unknown().default({}),
  chunk_status: ChunkStatusSchema.default('continue'),
});
export type LangbotResponse = z.infer<typeof LangbotResponseSchema>;

export type LangbotFrame = { kind: 'request'; request: LangbotRequest } | { kind: 'response'; response: LangbotResponse };

export const ChunkLineSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('chunk_start'), total_size: z.number().int().nonnegative() }),
  z.looseObject({ type: z.literal('chunk_data'), data: z.string(), offset: z.number().int().nonnegative() }),
  z.looseObject({ type: z.literal('chunk_end') }),
]);
export type ChunkLine = z.infer<typeof ChunkLineSchema>;

/** The error `data` of a non-zero answer the SDK turns into its AgentAPIError. */
export const LangbotErrorDataSchema = z.looseObject({
  error: z.looseObject({ code: z.string(), message: z.string(), retryable: z.boolean().default(false), details: JsonObjectSchema.default({}) }),
});
