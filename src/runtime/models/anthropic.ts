// Anthropic's Messages API on the official `@anthropic-ai/sdk`: lbot's OpenAI-shaped messages and tools
// become content blocks (tool_use / tool_result), and the reply comes back in lbot's shape.
import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageCreateParamsBase, MessageParam, Tool, ToolChoice } from '@anthropic-ai/sdk/resources/messages/messages';
import { z } from 'zod';
import type { ModelConfig } from '../../core/config.js';
import { ApiError } from '../../core/host/api-error.js';
import { isRecord } from '../../core/json.js';
import { parseJsonText } from '../../core/json-parse.js';
import type { Message, ToolCall } from '../../core/protocol/context.js';
import type { JsonObject } from '../../core/protocol/event.js';
import type { ModelUsage } from '../../core/protocol/proxy.js';
import { bodyCheck, type BodyLimits } from './bounded-fetch.js';
import { createHttpFetch } from './http-transport.js';
import { StreamCutError } from './upstream-error.js';
import { checkReplySize, contentText, ToolCallAccumulator, usageOf, type ChatBackend, type ChatRequest, type LlmTool } from './wire.js';

export const ANTHROPIC_ERRORS = Anthropic;

const ReplySchema = z.looseObject({
  model: z.string().nullish(),
  stop_reason: z.string().nullish(),
  content: z.array(
    z.union([
      z.looseObject({ type: z.literal('text'), text: z.string() }),
      z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() }),
      z.looseObject({ type: z.string() }),
    ]),
  ),
  usage: z.looseObject({ input_tokens: z.number().nullish(), output_tokens: z.number().nullish() }).nullish(),
});
const EventSchema = z.looseObject({ type: z.string() });
const StartSchema = z.looseObject({
  message: z.looseObject({ model: z.string().nullish(), usage: z.looseObject({ input_tokens: z.number().nullish() }).nullish() }),
});
const BlockStartSchema = z.looseObject({
  index: z.number().int().nonnegative(),
  content_block: z.looseObject({ type: z.string(), id: z.string().optional(), name: z.string().optional() }),
});
const BlockDeltaSchema = z.looseObject({
  index: z.number().int().nonnegative(),
  delta: z.looseObject({ type: z.string(), text: z.string().optional(), partial_json: z.string().optional() }),
});
const MessageDeltaSchema = z.looseObject({
  delta: z.looseObject({ stop_reason: z.string().nullish() }),
  usage: z.looseObject({ output_tokens: z.number().nullish() }).nullish(),
});

/** Anthropic's stop reasons in the OpenAI vocabulary lbot reports. */
const FINISH: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
  pause_turn: 'stop',
};
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

const unsupported = (what: string) => new ApiError('invalid_argument', what, 'unsupported_content', {});

function blocksOf(content: Message['content']): ContentBlockParam[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  return content.map((p): ContentBlockParam => {
    if (p.type === 'text') return { type: 'text', text: p.text ?? '' };
    if (p.type === 'image_url' && p.image_url) {
      const data = /^data:([^;]+);base64,(.*)$/s.exec(p.image_url.url);
      if (!data) return { type: 'image', source: { type: 'url', url: p.image_url.url } };
      return imageBlock(data[1] ?? '', data[2] ?? '');
    }
    if (p.type === 'image_base64' && p.image_base64) {
      const data = /^data:([^;]+);base64,(.*)$/s.exec(p.image_base64);
      return data ? imageBlock(data[1] ?? '', data[2] ?? '') : imageBlock('image/png', p.image_base64);
    }
    throw unsupported(`messages: content part type ${p.type} is not supported by Anthropic models`);
  });
}

function imageBlock(mime: string, data: string): ContentBlockParam {
  const media_type = IMAGE_TYPES.find((t) => t === mime);
  if (!media_type) throw unsupported(`messages: image type ${mime} is not one of ${IMAGE_TYPES.join(', ')}`);
  return { type: 'image', source: { type: 'base64', media_type, data } };
}

function toolInput(call: ToolCall): Record<string, unknown> {
  const value = parseJsonText(call.function.arguments || '{}', `tool call ${call.id} arguments`, 'invalid_argument');
  if (!isRecord(value)) throw unsupported(`messages: tool call ${call.id} arguments must be a JSON object`);
  return value;
}

/** lbot messages as Anthropic's `system` plus alternating user/assistant turns. */
export function toAnthropicMessages(messages: readonly Message[]): { system: string; messages: MessageParam[] } {
  const system: string[] = [];
  const out: MessageParam[] = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    const last = out.at(-1);
    if (last && last.role === role && Array.isArray(last.content)) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') system.push(contentText(m.content));
    else if (m.role === 'user') push('user', blocksOf(m.content));
    else if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c): ContentBlockParam => ({ type: 'tool_use', id: c.id, name: c.function.name, input: toolInput(c) }));
      push('assistant', [...blocksOf(m.content), ...calls]);
    } else if (m.role === 'tool') {
      if (!m.tool_call_id) throw unsupported('messages: a tool message needs tool_call_id');
      push('user', [{ type: 'tool_result', tool_use_id: m.tool_call_id, content: contentText(m.content) }]);
    } else throw unsupported(`messages: role ${m.role} is not one of system, developer, user, assistant, tool`);
  }
  return { system: system.filter(Boolean).join('\n\n'), messages: out };
}

export function toAnthropicTools(tools: readonly LlmTool[]): Tool[] {
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: { type: 'object', ...t.parameters } }));
}

function toolChoice(value: unknown): ToolChoice {
  if (value === 'auto') return { type: 'auto' };
  if (value === 'required') return { type: 'any' };
  if (value === 'none') return { type: 'none' };
  if (isRecord(value) && isRecord(value.function) && typeof value.function.name === 'string') return { type: 'tool', name: value.function.name };
  return { type: 'auto' };
}

/** The allowed extra args in Messages API terms; OpenAI-only sampling knobs are refused, not dropped. */
/** Sampling keys the Messages API takes that the SDK's newest types no longer list. */
type Sampling = { temperature?: number; top_p?: number; top_k?: number };

function argsFor(model: ModelConfig, args: JsonObject): Partial<MessageCreateParamsBase> & Sampling {
  const out: Partial<MessageCreateParamsBase> & Sampling = {};
  for (const [key, value] of Object.entries(args)) {
    if (key === 'max_tokens' && typeof value === 'number') out.max_tokens = value;
    else if (key === 'temperature' && typeof value === 'number') out.temperature = Math.min(value, 1);
    else if (key === 'top_p' && typeof value === 'number') out.top_p = value;
    else if (key === 'top_k' && typeof value === 'number') out.top_k = value;
    else if (key === 'stop') out.stop_sequences = typeof value === 'string' ? [value] : Array.isArray(value) ? value.map(String) : [];
    else if (key === 'tool_choice') out.tool_choice = toolChoice(value);
    else if (!model.allowed_extra_args.includes(key)) {
      throw new ApiError('invalid_argument', `extra_args.${key}: not supported by Anthropic model ${model.id}`, 'extra_arg_not_allowed', { key });
    }
  }
  return out;
}

export function createAnthropicBackend(model: ModelConfig, apiKey: string | undefined, baseURL: string | undefined, limits?: BodyLimits): ChatBackend {
  const client = new Anthropic({
    apiKey: apiKey ?? null,
    authToken: null,
    baseURL: baseURL ?? null,
    maxRetries: model.max_retries,
    timeout: model.timeout_ms,
    logLevel: 'off',
    fetch: createHttpFetch(bodyCheck(model.id, limits)),
  });
  const body = (req: ChatRequest): MessageCreateParamsBase & Sampling => {
    const { system, messages } = toAnthropicMessages(req.messages);
    return {
      max_tokens: model.max_tokens,
      ...argsFor(model, req.args),
      model: model.model ?? model.id,
      messages,
      ...(system ? { system } : {}),
      ...(req.tools.length ? { tools: toAnthropicTools(req.tools) } : {}),
    };
  };
  const opts = (req: ChatRequest) => ({ signal: req.signal, timeout: req.timeoutMs });
  const badShape = (err: z.ZodError) =>
    new ApiError('runtime_error', `model ${model.id}: unexpected response shape: ${err.issues[0]?.message ?? 'invalid'}`, 'downstream_error', {
      model_id: model.id,
    });

  return {
    async invoke(req) {
      const raw: unknown = await client.messages.create({ ...body(req), stream: false }, opts(req));
      const parsed = ReplySchema.safeParse(raw);
      if (!parsed.success) throw badShape(parsed.error);
      let text = '';
      const calls: ToolCall[] = [];
      for (const block of parsed.data.content) {
        if (block.type === 'text' && typeof block.text === 'string') text += block.text;
        else if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
          calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
        }
      }
      checkReplySize(model.id, text.length + calls.reduce((n, c) => n + c.function.arguments.length, 0));
      const message: Message = { role: 'assistant', content: text || (calls.length ? null : ''), ...(calls.length ? { tool_calls: calls } : {}) };
      const stop = parsed.data.stop_reason ?? null;
      return {
        message,
        usage: usageOf(parsed.data.usage?.input_tokens, parsed.data.usage?.output_tokens),
        finish_reason: stop ? (FINISH[stop] ?? stop) : null,
        model: parsed.data.model ?? null,
      };
    },
    async stream(req, onText) {
      const stream = await client.messages.create({ ...body(req), stream: true }, opts(req));
      const calls = new ToolCallAccumulator();
      let text = '';
      let stop: string | null = null;
      let input: number | null = null;
      let output: number | null = null;
      let upstreamModel: string | null = null;
      let stopped = false;
      for await (const raw of stream) {
        const ev = EventSchema.safeParse(raw);
        if (!ev.success) throw badShape(ev.error);
        const parse = <T>(schema: z.ZodType<T>): T => {
          const r = schema.safeParse(raw);
          if (!r.success) throw badShape(r.error);
          return r.data;
        };
        if (ev.data.type === 'message_start') {
          const start = parse(StartSchema);
          upstreamModel = start.message.model ?? null;
          input = start.message.usage?.input_tokens ?? null;
        } else if (ev.data.type === 'content_block_start') {
          const start = parse(BlockStartSchema);
          if (start.content_block.type === 'tool_use') calls.add(start.index, { id: start.content_block.id, name: start.content_block.name });
        } else if (ev.data.type === 'content_block_delta') {
          const delta = parse(BlockDeltaSchema);
          if (delta.delta.type === 'text_delta' && delta.delta.text) {
            text += delta.delta.text;
            onText(text);
          } else if (delta.delta.type === 'input_json_delta') calls.add(delta.index, { arguments: delta.delta.partial_json });
        } else if (ev.data.type === 'message_delta') {
          const md = parse(MessageDeltaSchema);
          stop = md.delta.stop_reason ?? stop;
          output = md.usage?.output_tokens ?? output;
        } else if (ev.data.type === 'message_stop') stopped = true;
        checkReplySize(model.id, text.length + calls.size);
      }
      if (!stopped && !req.signal.aborted) throw new StreamCutError('the stream ended before message_stop');
      const toolCalls = calls.done();
      const usage: ModelUsage | null = usageOf(input, output);
      const message: Message = { role: 'assistant', content: text || (toolCalls.length ? null : ''), ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
      return { message, usage, finish_reason: stop ? (FINISH[stop] ?? stop) : null, model: upstreamModel };
    },
  };
}
