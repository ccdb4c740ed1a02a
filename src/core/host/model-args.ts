// The extra_args policy of model calls: a runner may tune sampling, never choose the upstream model,
// messages, tools or streaming (those are the host's, set last by the provider). One place for it.
import { z } from 'zod';
import type { ModelConfig } from '../config.js';
import type { JsonObject } from '../protocol/event.js';
import { JsonObjectSchema } from '../protocol/event.js';
import { ApiError } from './api-error.js';

const ToolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.strictObject({ type: z.literal('function'), function: z.strictObject({ name: z.string().min(1).max(64) }) }),
]);

/** The built-in allowlist: each key with the values it may take. */
const ALLOWED: Record<string, z.ZodType> = {
  temperature: z.number().min(0).max(2),
  top_p: z.number().min(0).max(1),
  top_k: z.number().int().positive().max(1000),
  max_tokens: z.number().int().positive(),
  stop: z.union([z.string().max(256), z.array(z.string().max(256)).max(4)]),
  seed: z.number().int(),
  presence_penalty: z.number().min(-2).max(2),
  frequency_penalty: z.number().min(-2).max(2),
  response_format: z.looseObject({ type: z.enum(['text', 'json_object', 'json_schema']), json_schema: JsonObjectSchema.optional() }),
  tool_choice: ToolChoice,
  parallel_tool_calls: z.boolean(),
  reasoning_effort: z.enum(['minimal', 'low', 'medium', 'high']),
};

/** Keys the host always sets itself; refused even when an operator lists them as allowed. */
const HOST_OWNED = new Set(['model', 'messages', 'tools', 'functions', 'stream', 'stream_options', 'n', 'system', 'input', 'documents', 'query']);

/**
 * The args a provider sends: the model's stored `extra_args` overridden key by key by the call's allowed
 * ones. A key outside the allowlist, a bad value or `max_tokens` over the cap is refused `invalid_argument`.
 */
export function resolveExtraArgs(model: ModelConfig, callArgs: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(model.extra_args)) if (!HOST_OWNED.has(key)) out[key] = value;
  for (const [key, value] of Object.entries(callArgs)) {
    const refuse = (why: string) =>
      new ApiError('invalid_argument', `extra_args.${key}: ${why}`, 'extra_arg_not_allowed', {
        key,
        allowed: [...Object.keys(ALLOWED), ...model.allowed_extra_args],
      });
    if (HOST_OWNED.has(key)) throw refuse('set by the host, not by a runner');
    const schema = ALLOWED[key];
    if (!schema) {
      if (!model.allowed_extra_args.includes(key)) throw refuse(`not allowed for model ${model.id}`);
      out[key] = value;
      continue;
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw refuse(parsed.error.issues[0]?.message ?? 'invalid value');
    if (key === 'max_tokens' && typeof value === 'number' && value > model.max_tokens_cap) {
      throw refuse(`${value} is over the cap of model ${model.id} (${model.max_tokens_cap})`);
    }
    out[key] = value;
  }
  return out;
}
