// Any OpenAI-compatible endpoint (OpenAI, DeepSeek, OpenRouter, vLLM, Ollama, LM Studio …) on the official
// `openai` SDK: chat completions (plain and streamed), `/embeddings` and the common `/rerank` shape.
import OpenAI from 'openai';
import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { z } from 'zod';
import type { ModelConfig } from '../../core/config.js';
import { ApiError } from '../../core/host/api-error.js';
import type { Message } from '../../core/protocol/context.js';
import type { ModelReply, ModelUsage } from '../../core/protocol/proxy.js';
import { bodyCheck, type BodyLimits } from './bounded-fetch.js';
import { createHttpFetch } from './http-transport.js';
import { StreamCutError } from './upstream-error.js';
import { checkReplySize, contentText, ToolCallAccumulator, usageOf, type ChatBackend, type ChatRequest, type LlmTool } from './wire.js';

// Upstream replies are read field by field: the schemas drop the fields lbot does not read instead of copying them.
const UsageSchema = z.object({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish() }).nullish();
const WireToolCallSchema = z.object({ id: z.string(), type: z.string().optional(), function: z.object({ name: z.string(), arguments: z.string() }) });
const ChatResponseSchema = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        message: z.object({ content: z.string().nullish(), tool_calls: z.array(WireToolCallSchema).nullish() }),
      }),
    )
    .min(1, 'the reply has no choices'),
  usage: UsageSchema,
});
const ChunkSchema = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        delta: z
          .looseObject({
            content: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().int().nonnegative(),
                  id: z.string().nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
      }),
    )
    .default([]),
  usage: UsageSchema,
});
const EmbeddingsSchema = z.object({
  model: z.string().nullish(),
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()) })),
  usage: z.object({ prompt_tokens: z.number().nullish(), total_tokens: z.number().nullish() }).nullish(),
});
const RerankSchema = z.object({ results: z.array(z.object({ index: z.number().int(), relevance_score: z.number() })) });

export const OPENAI_ERRORS = OpenAI;

const unsupported = (what: string) => new ApiError('invalid_argument', `messages: ${what}`, 'unsupported_content', {});

function partsOf(content: NonNullable<Message['content']>): string | ChatCompletionContentPart[] {
  if (typeof content === 'string') return content;
  return content.map((p): ChatCompletionContentPart => {
    if (p.type === 'text') return { type: 'text', text: p.text ?? '' };
    if (p.type === 'image_url' && p.image_url) return { type: 'image_url', image_url: { url: p.image_url.url } };
    if (p.type === 'image_base64' && p.image_base64) {
      const url = p.image_base64.startsWith('data:') ? p.image_base64 : `data:image/png;base64,${p.image_base64}`;
      return { type: 'image_url', image_url: { url } };
    }
    throw unsupported(`content part type ${p.type} is not supported by OpenAI-compatible models`);
  });
}

/** lbot messages in the chat-completions wire format. */
export function toOpenAiMessages(messages: readonly Message[]): ChatCompletionMessageParam[] {
  return messages.map((m): ChatCompletionMessageParam => {
    const name = m.name ? { name: m.name } : {};
    switch (m.role) {
      case 'system':
      case 'developer':
        return { role: m.role, content: contentText(m.content), ...name };
      case 'user':
        return { role: 'user', content: partsOf(m.content ?? ''), ...name };
      case 'assistant': {
        const calls = m.tool_calls ?? [];
        return {
          role: 'assistant',
          content: m.content === undefined || m.content === null ? null : contentText(m.content),
          ...name,
          ...(calls.length
            ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: c.function.arguments } })) }
            : {}),
        };
      }
      case 'tool':
        if (!m.tool_call_id) throw unsupported('a tool message needs tool_call_id');
        return { role: 'tool', tool_call_id: m.tool_call_id, content: contentText(m.content) };
      default:
        throw unsupported(`role ${m.role} is not one of system, developer, user, assistant, tool`);
    }
  });
}

export function toOpenAiTools(tools: readonly LlmTool[]): ChatCompletionTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: Object.keys(t.parameters).length ? t.parameters : { type: 'object', properties: {} } },
  }));
}

function clientFor(model: ModelConfig, apiKey: string | undefined, baseURL: string, limits: BodyLimits | undefined): OpenAI {
  // A keyless local server (Ollama, vLLM) still gets a placeholder: the SDK refuses to start without one.
  // lbot reports upstream failures itself; the SDK's own console logging stays off.
  return new OpenAI({
    apiKey: apiKey ?? 'none',
    baseURL,
    maxRetries: model.max_retries,
    timeout: model.timeout_ms,
    logLevel: 'off',
    fetch: createHttpFetch(bodyCheck(model.id, limits)),
    organization: null,
    project: null,
  });
}

function badShape(model: ModelConfig, err: z.ZodError): ApiError {
  return new ApiError('runtime_error', `model ${model.id}: unexpected response shape: ${err.issues[0]?.message ?? 'invalid'}`, 'downstream_error', {
    model_id: model.id,
  });
}

export function createOpenAiBackend(model: ModelConfig, apiKey: string | undefined, baseURL: string, limits?: BodyLimits) {
  const client = clientFor(model, apiKey, baseURL, limits);
  // No default max_tokens here: newer OpenAI models refuse it (max_completion_tokens); the upstream's default applies.
  const body = (req: ChatRequest): ChatCompletionCreateParamsBase => ({
    ...req.args,
    model: model.model ?? model.id,
    messages: toOpenAiMessages(req.messages),
    ...(req.tools.length ? { tools: toOpenAiTools(req.tools) } : {}),
  });
  const opts = (req: { signal: AbortSignal; timeoutMs: number }) => ({ signal: req.signal, timeout: req.timeoutMs });

  const chat: ChatBackend = {
    async invoke(req) {
      const raw: unknown = await client.chat.completions.create({ ...body(req), stream: false }, opts(req));
      const parsed = ChatResponseSchema.safeParse(raw);
      if (!parsed.success) throw badShape(model, parsed.error);
      const choice = parsed.data.choices[0];
      const calls = choice?.message.tool_calls ?? [];
      checkReplySize(model.id, (choice?.message.content?.length ?? 0) + calls.reduce((n, c) => n + c.function.arguments.length, 0));
      const message: Message = {
        role: 'assistant',
        content: choice?.message.content ?? (calls.length ? null : ''),
        ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: c.function })) } : {}),
      };
      return {
        message,
        usage: usageOf(parsed.data.usage?.prompt_tokens, parsed.data.usage?.completion_tokens),
        finish_reason: choice?.finish_reason ?? null,
        model: parsed.data.model ?? null,
      };
    },
    async stream(req, onText) {
      const stream = await client.chat.completions.create({ ...body(req), stream: true, stream_options: { include_usage: true } }, opts(req));
      const calls = new ToolCallAccumulator();
      let text = '';
      let finish: string | null = null;
      let usage: ModelUsage | null = null;
      let upstreamModel: string | null = null;
      for await (const raw of stream) {
        const chunk = ChunkSchema.safeParse(raw);
        if (!chunk.success) throw badShape(model, chunk.error);
        upstreamModel ??= chunk.data.model ?? null;
        if (chunk.data.usage) usage = usageOf(chunk.data.usage.prompt_tokens, chunk.data.usage.completion_tokens);
        for (const choice of chunk.data.choices) {
          if (choice.finish_reason) finish = choice.finish_reason;
          for (const tc of choice.delta?.tool_calls ?? []) calls.add(tc.index, { id: tc.id, name: tc.function?.name, arguments: tc.function?.arguments });
          const piece = choice.delta?.content;
          if (piece) {
            text += piece;
            onText(text);
          }
        }
        checkReplySize(model.id, text.length + calls.size);
      }
      if (!finish && !req.signal.aborted) throw new StreamCutError('the stream ended before a finish_reason');
      const toolCalls = calls.done();
      const message: Message = { role: 'assistant', content: text || (toolCalls.length ? null : ''), ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
      return { message, usage, finish_reason: finish, model: upstreamModel } satisfies ModelReply;
    },
  };

  return {
    chat,
    async embed(input: string[], req: { signal: AbortSignal; timeoutMs: number }) {
      const raw: unknown = await client.embeddings.create({ model: model.model ?? model.id, input, encoding_format: 'float' }, opts(req));
      const parsed = EmbeddingsSchema.safeParse(raw);
      if (!parsed.success) throw badShape(model, parsed.error);
      const embeddings = [...parsed.data.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
      if (embeddings.length !== input.length)
        throw new ApiError('runtime_error', `model ${model.id}: ${embeddings.length} embeddings for ${input.length} inputs`, 'downstream_error', {
          model_id: model.id,
        });
      return { embeddings, model: parsed.data.model ?? null, usage: usageOf(parsed.data.usage?.prompt_tokens, 0) };
    },
    async rerank(query: string, documents: string[], top_n: number | null, req: { signal: AbortSignal; timeoutMs: number }) {
      const raw = await client.post<unknown>('/rerank', {
        body: { model: model.model ?? model.id, query, documents, ...(top_n ? { top_n } : {}) },
        ...opts(req),
      });
      const parsed = RerankSchema.safeParse(raw);
      if (!parsed.success) throw badShape(model, parsed.error);
      return parsed.data.results.map((r) => ({ index: r.index, relevance_score: r.relevance_score }));
    },
  };
}
