// Model providers behind the ModelProvider port: `fake` (scripted reply, for tests and CI) and `openai`
// (any OpenAI-compatible chat completions endpoint over fetch, with SSE streaming).
import { createParser } from 'eventsource-parser';
import { z } from 'zod';
import type { ModelConfig } from '../../core/config.js';
import { ApiError } from '../../core/host/api-error.js';
import type { ModelProvider } from '../../core/host/ports.js';
import { MessageSchema, type Message } from '../../core/protocol/context.js';

const ChatResponseSchema = z.looseObject({
  choices: z.array(z.looseObject({ message: MessageSchema })).min(1),
});
const ChatChunkSchema = z.looseObject({
  choices: z.array(z.looseObject({ delta: z.looseObject({ content: z.string().nullable().optional() }).optional() })).default([]),
});

function lookup(models: readonly ModelConfig[], id: string): ModelConfig {
  const model = models.find((m) => m.id === id);
  if (!model) throw new ApiError('not_found', `model ${id} is not configured`, 'model_not_found', { model_id: id });
  return model;
}

function lastUserText(messages: readonly Message[]): string {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content : '';
}

async function openaiRequest(model: ModelConfig, body: Record<string, unknown>, signal: AbortSignal): Promise<Response> {
  if (!model.base_url) throw new ApiError('runtime_error', `model ${model.id} has no base_url`, 'downstream_error');
  let res: Response;
  try {
    res = await fetch(`${model.base_url.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(model.api_key ? { authorization: `Bearer ${model.api_key}` } : {}) },
      body: JSON.stringify({ model: model.model ?? model.id, ...model.extra_args, ...body }),
      signal,
    });
  } catch (err) {
    throw new ApiError('runtime_error', `model ${model.id}: request failed: ${err instanceof Error ? err.message : String(err)}`, 'downstream_error', {}, true);
  }
  if (!res.ok) throw new ApiError('runtime_error', `model ${model.id}: HTTP ${res.status}`, 'downstream_error', { status: res.status }, res.status >= 500 || res.status === 429);
  return res;
}

/** Creates the provider for the configured models. */
export function createModelProvider(models: readonly ModelConfig[]): ModelProvider {
  return {
    async invoke({ model_id, messages, tools, extra_args, signal }) {
      const model = lookup(models, model_id);
      if (model.provider === 'fake') return { role: 'assistant', content: model.reply ?? lastUserText(messages) };
      const res = await openaiRequest(model, { messages, ...(tools.length ? { tools } : {}), ...extra_args }, signal);
      const parsed = ChatResponseSchema.safeParse(await res.json());
      if (!parsed.success) throw new ApiError('runtime_error', `model ${model_id}: unexpected response shape`, 'downstream_error');
      return parsed.data.choices[0]?.message ?? { role: 'assistant', content: '' };
    },
    async stream({ model_id, messages, tools, extra_args, signal }, onChunk) {
      const model = lookup(models, model_id);
      if (model.provider === 'fake') {
        const reply = model.reply ?? lastUserText(messages);
        let acc = '';
        for (const word of reply.split(/(?<=\s)/)) {
          acc += word;
          onChunk({ role: 'assistant', content: acc });
        }
        return { role: 'assistant', content: reply };
      }
      const res = await openaiRequest(model, { messages, stream: true, ...(tools.length ? { tools } : {}), ...extra_args }, signal);
      let acc = '';
      const parser = createParser({
        onEvent(ev) {
          if (ev.data === '[DONE]') return;
          const chunk = ChatChunkSchema.safeParse(JSON.parse(ev.data));
          const piece = chunk.success ? (chunk.data.choices[0]?.delta?.content ?? '') : '';
          if (piece) {
            acc += piece;
            onChunk({ role: 'assistant', content: acc });
          }
        },
      });
      const decoder = new TextDecoder();
      if (res.body) for await (const part of res.body) parser.feed(decoder.decode(part, { stream: true }));
      return { role: 'assistant', content: acc };
    },
    async rerank({ model_id, query, documents }) {
      const model = lookup(models, model_id);
      if (model.provider !== 'fake') throw new ApiError('runtime_error', `model ${model_id}: rerank is only available on fake models in this version`, 'downstream_error');
      const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
      return documents.map((doc, index) => {
        const text = doc.toLowerCase();
        return { index, relevance_score: terms.length ? terms.filter((t) => text.includes(t)).length / terms.length : 0 };
      });
    },
  };
}
