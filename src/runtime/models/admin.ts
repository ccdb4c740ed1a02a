// What `lbot model …` does: edit the model list in the config file, show it with keys masked, and test a
// model with three tiny requests (plain, streamed, with a tool) through the same provider code runs use.
import { performance } from 'node:perf_hooks';
import { maskSecrets, ModelConfigSchema, type Config, type ModelConfig } from '../../core/config.js';
import { LbotError } from '../../core/errors.js';
import { toApiError } from '../../core/host/api-error.js';
import { isRecord } from '../../core/json.js';
import type { ModelUsage } from '../../core/protocol/proxy.js';
import type { ConfigFile } from '../../core/stores/config-file.js';
import { createModelProvider } from './providers.js';
import { contextWindowOf, tokenizerOf } from './tokens.js';

export type AddModelInput = {
  name: string;
  provider: string;
  base_url?: string | undefined;
  model?: string | undefined;
  api_key_env?: string | undefined;
  /** Read from stdin by the command; stored in the 0600 config file. */
  api_key?: string | undefined;
  reply?: string | undefined;
  model_type?: string | undefined;
  function_calling?: boolean | undefined;
  tokenizer?: string | undefined;
  context_window?: number | undefined;
};

export type ModelSummary = {
  id: string;
  provider: string;
  model_type: string;
  model: string | null;
  base_url: string | null;
  /** Where the key comes from, never the key: `env:VAR`, `stored` or `none`. */
  key: string;
  function_calling: boolean;
  tokenizer: string | null;
  context_window: number | null;
};

export type ProbeResult = { ok: boolean; latency_ms: number; error: string | null };
export type ModelTestResult = {
  name: string;
  ok: boolean;
  upstream_model: string | null;
  latency_ms: number | null;
  usage: ModelUsage | null;
  reply: string | null;
  error: string | null;
  streaming: ProbeResult;
  tool_calls: ProbeResult & { supported: boolean };
};

function notFound(name: string): LbotError {
  return new LbotError('not_found', `model ${name} is not configured`, { details: { name }, hint: 'lbot model list shows the configured models' });
}

function find(config: Config, name: string): ModelConfig {
  const model = config.models.find((m) => m.id === name);
  if (!model) throw notFound(name);
  return model;
}

function rawModels(raw: Record<string, unknown>): unknown[] {
  const list = Array.isArray(raw.models) ? raw.models : [];
  raw.models = list;
  return list;
}

const rawId = (entry: unknown) => (isRecord(entry) && typeof entry.id === 'string' ? entry.id : null);

export function summarize(m: ModelConfig): ModelSummary {
  return {
    id: m.id,
    provider: m.provider,
    model_type: m.model_type,
    model: m.model ?? null,
    base_url: m.base_url ?? null,
    key: m.api_key ? 'stored' : m.api_key_env ? `env:${m.api_key_env}` : 'none',
    function_calling: m.function_calling,
    tokenizer: tokenizerOf(m),
    context_window: contextWindowOf(m),
  };
}

export async function addModel(file: ConfigFile, input: AddModelInput): Promise<ModelSummary> {
  const entry: Record<string, unknown> = { id: input.name, provider: input.provider };
  for (const key of ['base_url', 'model', 'api_key_env', 'api_key', 'reply', 'model_type', 'function_calling', 'tokenizer', 'context_window'] as const) {
    if (input[key] !== undefined) entry[key] = input[key];
  }
  const parsed = ModelConfigSchema.safeParse(entry);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LbotError('invalid_argument', `model ${input.name}: ${issue?.path.join('.') || 'entry'}: ${issue?.message ?? 'invalid'}`);
  }
  if (parsed.data.provider === 'openai' && !parsed.data.base_url) {
    throw new LbotError('invalid_argument', `model ${input.name}: provider openai needs --base-url (e.g. https://api.openai.com/v1)`);
  }
  await file.update((raw) => {
    const list = rawModels(raw);
    if (list.some((m) => rawId(m) === input.name)) {
      throw new LbotError('invalid_argument', `model ${input.name} already exists`, {
        details: { name: input.name },
        hint: `remove it first with lbot model rm ${input.name}, or pick another name`,
      });
    }
    list.push(entry);
  });
  return summarize(find(file.config, input.name));
}

export function listModels(config: Config): { models: ModelSummary[] } {
  return { models: config.models.map(summarize) };
}

export function showModel(config: Config, name: string): { model: unknown; summary: ModelSummary } {
  const model = find(config, name);
  return { model: maskSecrets(model), summary: summarize(model) };
}

export async function removeModel(file: ConfigFile, name: string): Promise<{ removed: string }> {
  find(file.config, name);
  await file.update((raw) => {
    raw.models = rawModels(raw).filter((m) => rawId(m) !== name);
  });
  return { removed: name };
}

const PROBE_TOOL = {
  name: 'get_time',
  description: 'Returns the current time in a time zone.',
  parameters: { type: 'object', properties: { tz: { type: 'string' } }, required: ['tz'] },
};

/** Sends a tiny plain, streamed and tool-offering request; every failure is reported, none thrown. */
export async function testModel(config: Config, name: string, env: NodeJS.ProcessEnv = process.env): Promise<ModelTestResult> {
  const model = find(config, name);
  const provider = createModelProvider([model], { env });
  const signal = new AbortController().signal;
  const base = { model_id: name, extra_args: {}, deadline_at: Date.now() / 1000 + 60, signal };
  const timed = async <T>(fn: () => Promise<T>): Promise<{ value: T | null; ms: number; error: string | null }> => {
    const t0 = performance.now();
    try {
      const value = await fn();
      return { value, ms: Math.round(performance.now() - t0), error: null };
    } catch (err) {
      return { value: null, ms: Math.round(performance.now() - t0), error: toApiError(err).message };
    }
  };

  const plain = await timed(() => provider.invoke({ ...base, messages: [{ role: 'user', content: 'Reply with the single word: pong' }], tools: [] }));
  const streamed = await timed(() => provider.stream({ ...base, messages: [{ role: 'user', content: 'Count from 1 to 3.' }], tools: [] }, () => {}));
  const tool = model.function_calling
    ? await timed(() =>
        provider.invoke({ ...base, messages: [{ role: 'user', content: 'What time is it in UTC? Use the get_time tool.' }], tools: [PROBE_TOOL] }),
      )
    : null;
  const called = tool?.value?.message.tool_calls?.some((c) => c.function.name === PROBE_TOOL.name) ?? false;
  const reply = plain.value?.message.content;
  return {
    name,
    ok: plain.error === null && streamed.error === null && (tool === null || called),
    upstream_model: plain.value?.model ?? null,
    latency_ms: plain.error === null ? plain.ms : null,
    usage: plain.value?.usage ?? null,
    reply: typeof reply === 'string' ? reply.slice(0, 200) : null,
    error: plain.error,
    streaming: { ok: streamed.error === null && typeof streamed.value?.message.content === 'string', latency_ms: streamed.ms, error: streamed.error },
    tool_calls: {
      supported: model.function_calling,
      ok: called,
      latency_ms: tool?.ms ?? 0,
      error: tool === null ? 'function calling is off for this model' : (tool.error ?? (called ? null : 'the reply had no get_time tool call')),
    },
  };
}
