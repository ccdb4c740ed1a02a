// models.count_tokens on gpt-tokenizer: the encoding comes from the model's `tokenizer` key or from the
// tokenizer's own table of known model names; an unknown model fails instead of guessing.
import { DEFAULT_ENCODING, modelToEncodingMap } from 'gpt-tokenizer/mapping';
import * as knownModels from 'gpt-tokenizer/models';
import type { ModelConfig } from '../../core/config.js';
import { ApiError } from '../../core/host/api-error.js';
import type { Message } from '../../core/protocol/context.js';
import type { JsonObject } from '../../core/protocol/event.js';
import { contentText } from './wire.js';

type Encoder = { countTokens(text: string): number };

const ENCODINGS: Record<string, () => Promise<Encoder>> = {
  o200k_base: () => import('gpt-tokenizer/encoding/o200k_base'),
  o200k_harmony: () => import('gpt-tokenizer/encoding/o200k_harmony'),
  cl100k_base: () => import('gpt-tokenizer/encoding/cl100k_base'),
  p50k_base: () => import('gpt-tokenizer/encoding/p50k_base'),
  r50k_base: () => import('gpt-tokenizer/encoding/r50k_base'),
};

/** Per-message framing of chat formats (role markers); OpenAI documents 3 tokens a message plus 3 for the reply. */
const PER_MESSAGE = 3;
const PER_REPLY = 3;

export const TOKENIZER_NAMES = Object.keys(ENCODINGS);

function upstreamName(model: ModelConfig): string {
  return model.model ?? model.id;
}

const SPECS = new Map<string, unknown>(Object.entries(knownModels));
const ENCODING_OF = new Map<string, string>(Object.entries(modelToEncodingMap));

/** The tokenizer's metadata of a known OpenAI model name, or undefined. */
function knownSpec(name: string): unknown {
  return SPECS.get(name);
}

/**
 * The encoding name of a model: the configured `tokenizer`, else the tokenizer's own choice for a model
 * name it knows (its table lists the older encodings; newer known models use its default). Otherwise null.
 */
export function tokenizerOf(model: ModelConfig): string | null {
  if (model.tokenizer) return model.tokenizer;
  const name = upstreamName(model);
  return ENCODING_OF.get(name) ?? (knownSpec(name) === undefined ? null : DEFAULT_ENCODING);
}

/** The context window from config, else from the tokenizer's model metadata. */
export function contextWindowOf(model: ModelConfig): number | null {
  if (model.context_window) return model.context_window;
  const name = upstreamName(model);
  const spec = knownSpec(name);
  if (typeof spec === 'object' && spec !== null && 'context_window' in spec && typeof spec.context_window === 'number') return spec.context_window;
  return null;
}

export async function countTokens(
  model: ModelConfig,
  req: { messages: Message[]; text?: string | undefined; tools: JsonObject[] },
): Promise<{ tokens: number; context_window: number | null; tokenizer: string }> {
  const tokenizer = tokenizerOf(model);
  const load = tokenizer ? ENCODINGS[tokenizer] : undefined;
  if (!tokenizer || !load) {
    throw new ApiError(
      'not_found',
      `model ${model.id}: ${tokenizer ? `tokenizer ${tokenizer} is not one of ${TOKENIZER_NAMES.join(', ')}` : `the tokenizer of ${upstreamName(model)} is unknown; set models[].tokenizer in the config`}`,
      'tokenizer_not_found',
      { model_id: model.id },
    );
  }
  // Nothing to encode (a probe for the context window, as the local agent's first call): the encoding, a few
  // hundred milliseconds to load in a fresh process, is not loaded for it.
  if (!req.text && req.messages.length === 0 && req.tools.length === 0) return { tokens: 0, context_window: contextWindowOf(model), tokenizer };
  const enc = await load();
  let tokens = 0;
  if (req.text !== undefined) tokens += enc.countTokens(req.text);
  for (const m of req.messages) {
    tokens += PER_MESSAGE + enc.countTokens(m.role) + enc.countTokens(contentText(m.content));
    if (m.name) tokens += enc.countTokens(m.name);
    for (const c of m.tool_calls ?? []) tokens += enc.countTokens(c.function.name) + enc.countTokens(c.function.arguments);
  }
  if (req.messages.length > 0) tokens += PER_REPLY;
  // Tool specs travel as JSON schema text; counting their JSON is the usual estimate.
  for (const t of req.tools) tokens += enc.countTokens(JSON.stringify(t));
  return { tokens, context_window: contextWindowOf(model), tokenizer };
}
