// The cassette file of `lbot run --record/--replay`: every proxy call of each run, the model and tool
// answers the host gave, and the final results (docs/dev-loop.md, "Record and replay").
import { z } from 'zod';
import { JsonObjectSchema } from '../protocol/event.js';
import { AgentApiErrorSchema } from '../protocol/proxy.js';

export const CASSETTE_VERSION = 1;

const OutcomeSchema = z.union([
  z.strictObject({ ok: z.literal(true), result: z.unknown() }),
  z.strictObject({ ok: z.literal(false), error: AgentApiErrorSchema }),
]);
export type TapeOutcome = z.infer<typeof OutcomeSchema>;

/** One proxy call as the router answered it (params without run_id). */
export const TapeCallSchema = z.strictObject({
  seq: z.number().int().nonnegative(),
  action: z.string(),
  params: JsonObjectSchema,
  outcome: OutcomeSchema,
});
export type TapeCall = z.infer<typeof TapeCallSchema>;

/** Provider-level answers that replay serves instead of real models and tools. */
export const ANSWER_KINDS = ['models.invoke', 'models.stream', 'models.rerank', 'models.embed', 'models.count_tokens', 'tools.list', 'tools.call'] as const;
export type AnswerKind = (typeof ANSWER_KINDS)[number];

export const TapeAnswerSchema = z.strictObject({
  kind: z.enum(ANSWER_KINDS),
  request: z.unknown(),
  /** `models.stream`: the chunks sent before the final message. */
  chunks: z.array(JsonObjectSchema).optional(),
  outcome: OutcomeSchema,
});
export type TapeAnswer = z.infer<typeof TapeAnswerSchema>;

/** What a run left behind, normalized so two runs of the same behaviour compare equal. */
export const TapeResultsSchema = z.strictObject({
  status: z.string(),
  error: z.strictObject({ code: z.string(), message: z.string() }).nullable(),
  reply: z.string().nullable(),
  delivered: z.array(JsonObjectSchema),
  observed: z.array(JsonObjectSchema),
});
export type TapeResults = z.infer<typeof TapeResultsSchema>;

export const TapeRunSchema = z.strictObject({
  event_id: z.string(),
  event_type: z.string(),
  runner_id: z.string(),
  calls: z.array(TapeCallSchema),
  answers: z.array(TapeAnswerSchema),
  results: TapeResultsSchema,
});
export type TapeRun = z.infer<typeof TapeRunSchema>;

/** Model entries without secrets: replay grants the same model ids without the real config. */
export const TapeModelSchema = z.strictObject({ id: z.string(), provider: z.enum(['fake', 'openai', 'anthropic']), model_type: z.string() });
export type TapeModel = z.infer<typeof TapeModelSchema>;

export const CassetteSchema = z.strictObject({
  lbot_cassette: z.literal(CASSETTE_VERSION),
  recorded_at: z.string(),
  lbot_version: z.string(),
  models: z.array(TapeModelSchema),
  runs: z.array(TapeRunSchema),
});
export type Cassette = z.infer<typeof CassetteSchema>;
