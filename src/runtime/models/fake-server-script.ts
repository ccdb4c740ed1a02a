// The script of `lbot model fake-server`: what the fake upstream answers, step by step, and its fault knobs.
import { z } from 'zod';
import { parseJsonText } from '../../core/json-parse.js';
import { LbotError } from '../../core/errors.js';

const ToolCallStep = z.strictObject({
  id: z.string().min(1).optional(),
  name: z.string().min(1),
  /** A JSON text, or an object serialized for you. */
  arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).default('{}'),
});

const FaultSchema = z.union([
  z.strictObject({ status: z.number().int().min(400).max(599), retry_after_s: z.number().nonnegative().optional(), message: z.string().optional() }),
  /** A stream whose second event is not JSON (a non-stream call gets a body that is not JSON). */
  z.literal('malformed_chunk'),
  /** The connection is destroyed after the first event (before any byte for a non-stream call). */
  z.literal('drop'),
  /**
   * A reply of `bytes` bytes, for a client's size cap: a non-stream body with an exact Content-Length, none
   * (chunked), or an understated one (written past it on the raw socket); a stream sends it as one event line.
   */
  z.strictObject({
    huge_body: z.strictObject({
      bytes: z
        .number()
        .int()
        .positive()
        .max(2 ** 32),
      content_length: z.enum(['exact', 'none', 'understated']).default('none'),
    }),
  }),
]);

export const FakeStepSchema = z.strictObject({
  content: z.string().optional(),
  tool_calls: z.array(ToolCallStep).optional(),
  finish_reason: z.string().optional(),
  fault: FaultSchema.optional(),
  first_token_delay_ms: z.number().int().nonnegative().optional(),
  chunk_delay_ms: z.number().int().nonnegative().optional(),
  /**
   * A stream stops before its last event until the test calls `release()` on the in-process server (or the
   * client goes away): proves a consumer sees the first deltas while the upstream has not finished.
   */
  hold_last_event: z.boolean().optional(),
  /** Answer this step this many times before moving on (e.g. `{fault: {status: 500}, times: 3}`). */
  times: z.number().int().positive().default(1),
});
export type FakeStep = z.infer<typeof FakeStepSchema>;

export const FakeScriptSchema = z.strictObject({
  /** When set, requests must carry this key (Bearer for OpenAI, x-api-key for Anthropic). */
  api_key: z.string().min(1).optional(),
  /** When set, any other model name is answered 404 model_not_found. */
  models: z.array(z.string().min(1)).optional(),
  /** Chat replies in order (shared by /v1/chat/completions and /v1/messages); then an echo of the last user text. */
  steps: z.array(FakeStepSchema).default([]),
  /** Characters per streamed content or argument piece. */
  chunk_size: z.number().int().positive().default(4),
  first_token_delay_ms: z.number().int().nonnegative().default(0),
  chunk_delay_ms: z.number().int().nonnegative().default(0),
  embedding_dims: z.number().int().positive().max(4096).default(8),
  /**
   * Groups of words that mean the same (`[["car","automobile"]]`). When set, embeddings are bags of words in which
   * each group is one dimension, so texts sharing a meaning but no word end up close (semantic retrieval tests).
   */
  embedding_concepts: z
    .array(z.array(z.string().min(1).max(64)).min(1).max(64))
    .max(256)
    .optional(),
  /**
   * Embedding calls after the first this many wait, unanswered, until the test calls `release()` on the
   * in-process server (or the client goes away): a client is provably mid-ingestion while one is held.
   */
  hold_embeddings_after: z.number().int().nonnegative().optional(),
  max_body_bytes: z
    .number()
    .int()
    .positive()
    .default(4 * 1024 * 1024),
});
export type FakeScript = z.infer<typeof FakeScriptSchema>;
export type FakeScriptInput = z.input<typeof FakeScriptSchema>;

export function parseFakeScript(text: string, file: string): FakeScript {
  const parsed = FakeScriptSchema.safeParse(parseJsonText(text, file, 'invalid_argument'));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new LbotError('invalid_argument', `${file}: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`, {
    hint: 'docs/models.md describes the fake-server script',
  });
}
