// The runner's binding config: the manifest form's keys with their defaults, checked once per run.
import { z } from 'lbot/sdk';

/** Hard cap of tool-call rounds whatever the config says (acceptance AC-224). */
export const MAX_TOOL_ROUNDS = 128;

export const DEFAULT_PROMPT: Array<{ role: 'system'; content: string }> = [
  {
    role: 'system',
    content:
      'You are a helpful assistant. When tools are available, use them for exact calculations, data processing and running code instead of guessing. ' +
      'Unless the user asks for code, give the results directly rather than the code that produced them.',
  },
];

const SENTINELS = new Set(['', '__none__', '__none']);
const modelId = z.string().transform((s) => s.trim());
const int = (min: number, max: number, fallback: number) => z.number().int().min(min).max(max).default(fallback);

const ModelSchema = z
  .union([modelId, z.looseObject({ primary: modelId.default(''), fallbacks: z.array(modelId).max(16).default([]) })])
  .default({ primary: '', fallbacks: [] })
  .transform((m) => {
    const ids = typeof m === 'string' ? [m] : [m.primary, ...m.fallbacks];
    return [...new Set(ids.filter((id) => !SENTINELS.has(id)))];
  });

const PromptMessageSchema = z.looseObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string().max(200_000) });

export const LocalAgentConfigSchema = z.looseObject({
  model: ModelSchema,
  timeout: int(1, 86_400, 300),
  prompt: z.array(PromptMessageSchema).max(64).default(DEFAULT_PROMPT),
  'knowledge-bases': z.array(z.string()).max(64).default([]),
  'retrieval-top-k': int(1, 100, 5),
  'rerank-model': z
    .string()
    .default('')
    .transform((s) => (SENTINELS.has(s) ? '' : s)),
  'rerank-top-k': int(1, 100, 5),
  'max-tool-iterations': z
    .number()
    .int()
    .min(1)
    .default(100)
    .transform((n) => Math.min(n, MAX_TOOL_ROUNDS)),
  'tool-execution-mode': z.enum(['parallel', 'serial']).default('parallel'),
  'max-tool-result-chars': int(500, 1_000_000, 20_000),
  'context-history-fetch-limit': int(0, 100, 50),
  'context-window-tokens': int(1_000, 10_000_000, 200_000),
  'context-reserve-tokens': int(0, 1_000_000, 16_384),
  'context-keep-recent-tokens': int(0, 1_000_000, 20_000),
  'context-summary-tokens': int(100, 100_000, 8_000),
  'remove-think': z.boolean().default(false),
});
export type LocalAgentConfig = z.infer<typeof LocalAgentConfigSchema>;

/** The config, or a one-line reason naming the first bad key. */
export function parseConfig(raw: unknown): { ok: true; config: LocalAgentConfig } | { ok: false; reason: string } {
  const parsed = LocalAgentConfigSchema.safeParse(raw ?? {});
  if (parsed.success) return { ok: true, config: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, reason: `${issue?.path.join('.') || '(config)'}: ${issue?.message ?? 'invalid'}` };
}
