// The ModelProvider port over the configured models: `openai` (any OpenAI-compatible endpoint), `anthropic`
// (Messages API) and the scripted `fake`. The host's rules hold here for every provider: the extra_args
// policy, no tools for a model without function calling, remove_think, and no attempt past the run deadline.
import type { ModelConfig } from '../../core/config.js';
import { ApiError } from '../../core/host/api-error.js';
import { resolveExtraArgs } from '../../core/host/model-args.js';
import type { ModelCall, ModelProvider } from '../../core/host/ports.js';
import type { ModelReply } from '../../core/protocol/proxy.js';
import type { BodyLimits } from './bounded-fetch.js';
import { fakeEmbed, fakeRerank, fakeReply } from './fake.js';
import type { createOpenAiBackend } from './openai.js';
import { toUpstreamError, type SdkErrors, type StopReason } from './upstream-error.js';
import { stripThink, type ChatBackend, type LlmTool } from './wire.js';

const DEFAULT_ANTHROPIC_URL = 'https://api.anthropic.com';

type Backend = { chat: ChatBackend; errors: SdkErrors; endpoint: string; apiKey: string | undefined; openai: ReturnType<typeof createOpenAiBackend> | null };

function lookup(models: readonly ModelConfig[], id: string): ModelConfig {
  const model = models.find((m) => m.id === id);
  if (!model) throw new ApiError('not_found', `model ${id} is not configured`, 'model_not_found', { model_id: id });
  return model;
}

/** The key of a model: stored in the config, or read from the env var it names (never logged). */
export function apiKeyOf(model: ModelConfig, env: NodeJS.ProcessEnv): string | undefined {
  if (model.api_key) return model.api_key;
  if (!model.api_key_env) return undefined;
  const value = env[model.api_key_env];
  if (!value)
    throw new ApiError('runtime_error', `model ${model.id}: the environment variable ${model.api_key_env} that holds its key is not set`, 'api_key_missing', {
      model_id: model.id,
      api_key_env: model.api_key_env,
    });
  return value;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The call's signal joined with the run deadline, and the per-attempt timeout it leaves. One controller and
 * one timer per call, both let go by `release` (AbortSignal.any would keep every call's signal tied to the
 * run's until the run ends).
 */
function bounded(
  model: ModelConfig,
  deadline_at: number | null,
  signal: AbortSignal,
): { signal: AbortSignal; timeoutMs: number; stopped: () => StopReason; release: () => void } {
  const left = deadline_at === null ? Number.POSITIVE_INFINITY : deadline_at * 1000 - Date.now();
  if (left <= 0) throw new ApiError('deadline_exceeded', 'the run deadline has passed', 'run_deadline', { model_id: model.id });
  const timeoutMs = Math.max(1, Math.min(model.timeout_ms, Math.ceil(left)));
  // A deadline past what a timer can hold (about 24.8 days) is left to the per-attempt timeout.
  if (!(left <= MAX_TIMER_MS)) return { signal, timeoutMs, stopped: () => (signal.aborted ? 'cancelled' : null), release: () => {} };
  const joined = new AbortController();
  let late = false;
  const onAbort = () => joined.abort(signal.reason);
  const timer = setTimeout(() => {
    late = true;
    joined.abort(new DOMException('the run deadline has passed', 'TimeoutError'));
  }, Math.ceil(left));
  timer.unref();
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return {
    signal: joined.signal,
    timeoutMs,
    stopped: () => (signal.aborted ? 'cancelled' : late ? 'deadline' : null),
    release: () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    },
  };
}

function toolsOf(model: ModelConfig, tools: ModelCall['tools']): LlmTool[] {
  if (!model.function_calling) return [];
  return tools.map((t) => ({
    name: String(t.name),
    description: typeof t.description === 'string' ? t.description : '',
    parameters: typeof t.parameters === 'object' && t.parameters !== null && !Array.isArray(t.parameters) ? { ...t.parameters } : {},
  }));
}

function withoutThink(reply: ModelReply): ModelReply {
  const content = reply.message.content;
  return typeof content === 'string' ? { ...reply, message: { ...reply.message, content: stripThink(content) } } : reply;
}

export type ModelProviderOptions = {
  env?: NodeJS.ProcessEnv;
  /** Caps on upstream response bodies (bounded-fetch.ts); smaller ones keep tests quick. */
  bodyLimits?: BodyLimits;
};

let tokensImport: Promise<typeof import('./tokens.js')> | undefined;
/** The token counting module (the tokenizer's model tables; an encoding loads on its first count). */
const tokensModule = () => (tokensImport ??= import('./tokens.js'));

/**
 * Creates the provider for the configured models: a list, or a function giving the list as it is now (a
 * running serve follows `lbot model add|remove`; each call looks its model up afresh).
 */
export function createModelProvider(configured: readonly ModelConfig[] | (() => readonly ModelConfig[]), opts: ModelProviderOptions = {}): ModelProvider {
  const env = opts.env ?? process.env;
  const current = typeof configured === 'function' ? configured : () => configured;
  // Keyed by the model's config object: an edited model (new base_url, key) gets a new client.
  const backends = new WeakMap<ModelConfig, Backend>();
  const lookupNow = (id: string) => lookup(current(), id);

  // The SDKs are imported on a model's first upstream call: most commands and runs never make one.
  const backendOf = async (model: ModelConfig): Promise<Backend> => {
    const cached = backends.get(model);
    if (cached) return cached;
    const apiKey = apiKeyOf(model, env);
    let backend: Backend;
    if (model.provider === 'anthropic') {
      const { ANTHROPIC_ERRORS, createAnthropicBackend } = await import('./anthropic.js');
      const endpoint = model.base_url ?? DEFAULT_ANTHROPIC_URL;
      backend = { chat: createAnthropicBackend(model, apiKey, model.base_url, opts.bodyLimits), errors: ANTHROPIC_ERRORS, endpoint, apiKey, openai: null };
    } else {
      if (!model.base_url) throw new ApiError('runtime_error', `model ${model.id} has no base_url`, 'downstream_error', { model_id: model.id });
      const { createOpenAiBackend, OPENAI_ERRORS } = await import('./openai.js');
      const openai = createOpenAiBackend(model, apiKey, model.base_url, opts.bodyLimits);
      backend = { chat: openai.chat, errors: OPENAI_ERRORS, endpoint: model.base_url, apiKey, openai };
    }
    backends.set(model, backend);
    return backend;
  };

  /** Runs one upstream call with the deadline-bounded signal, mapping whatever it throws. */
  async function upstream<T>(
    model: ModelConfig,
    req: { deadline_at: number | null; signal: AbortSignal },
    call: (b: Backend, s: { signal: AbortSignal; timeoutMs: number }) => Promise<T>,
  ): Promise<T> {
    const backend = await backendOf(model);
    const bound = bounded(model, req.deadline_at, req.signal);
    try {
      const result = await call(backend, bound);
      // The SDKs end an aborted stream quietly; a partial reply must not pass for a whole one.
      if (bound.stopped()) throw new Error('aborted');
      return result;
    } catch (err) {
      throw toUpstreamError(err, backend.errors, { model_id: model.id, endpoint: backend.endpoint, apiKey: backend.apiKey }, bound.stopped());
    } finally {
      bound.release();
    }
  }

  const prepare = (req: ModelCall) => {
    const model = lookupNow(req.model_id);
    const args = resolveExtraArgs(model, req.extra_args);
    return { model, args, tools: toolsOf(model, req.tools), think: req.remove_think ?? model.remove_think };
  };

  const requireOpenAi = (model: ModelConfig, b: Backend, what: string) => {
    if (!b.openai)
      throw new ApiError('invalid_argument', `model ${model.id}: ${what} needs an OpenAI-compatible (provider openai) model`, 'unsupported_operation', {
        model_id: model.id,
      });
    return b.openai;
  };

  return {
    async invoke(req) {
      const { model, args, tools, think } = prepare(req);
      const reply =
        model.provider === 'fake'
          ? fakeReply(model, req.messages)
          : await upstream(model, req, (b, s) => b.chat.invoke({ model, messages: req.messages, tools, args, ...s }));
      return think ? withoutThink(reply) : reply;
    },
    async stream(req, onChunk) {
      const { model, args, tools, think } = prepare(req);
      let seq = 0;
      const onText = (text: string) => onChunk({ role: 'assistant', content: think ? stripThink(text) : text, msg_sequence: seq++, is_final: false });
      let reply: ModelReply;
      if (model.provider === 'fake') {
        reply = fakeReply(model, req.messages);
        const text = typeof reply.message.content === 'string' ? reply.message.content : '';
        let acc = '';
        for (const word of text.split(/(?<=\s)/)) onText((acc += word));
      } else {
        reply = await upstream(model, req, (b, s) => b.chat.stream({ model, messages: req.messages, tools, args, ...s }, onText));
      }
      return think ? withoutThink(reply) : reply;
    },
    async rerank(req) {
      const model = lookupNow(req.model_id);
      if (model.provider === 'fake') return fakeRerank(req.query, req.documents);
      return await upstream(model, req, (b, s) => requireOpenAi(model, b, 'rerank').rerank(req.query, req.documents, req.top_n ?? null, s));
    },
    async embed(req) {
      const model = lookupNow(req.model_id);
      if (model.provider === 'fake') return fakeEmbed(req.input);
      return await upstream(model, req, (b, s) => requireOpenAi(model, b, 'embed').embed(req.input, s));
    },
    async countTokens(req) {
      const model = lookupNow(req.model_id);
      const { countTokens } = await tokensModule();
      return await countTokens(model, req);
    },
    prepare(model_ids) {
      tokensModule().catch(() => undefined);
      for (const id of model_ids) {
        const model = current().find((m) => m.id === id);
        // A model that cannot be set up (no key, no base_url) fails on its call, with the call's error.
        if (model && model.provider !== 'fake') backendOf(model).catch(() => undefined);
      }
    },
  };
}
