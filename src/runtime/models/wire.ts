// What every upstream backend shares: the request it receives after the host's policy, the reply it
// returns, and the text helpers (think-block stripping, tool-call accumulation by index).
import type { ModelConfig } from '../../core/config.js';
import { ApiError } from '../../core/host/api-error.js';
import type { Message, ToolCall } from '../../core/protocol/context.js';
import type { JsonObject } from '../../core/protocol/event.js';
import type { ModelReply, ModelUsage } from '../../core/protocol/proxy.js';

/** lbot's `LLMToolSpec` as the host passes it. */
export type LlmTool = { name: string; description: string; parameters: JsonObject };

export type ChatRequest = {
  model: ModelConfig;
  messages: Message[];
  /** Empty when the model has no function calling. */
  tools: LlmTool[];
  /** Allowed extra args (host policy applied). */
  args: JsonObject;
  signal: AbortSignal;
  /** Per-attempt timeout, already bounded by the run deadline. */
  timeoutMs: number;
};

export interface ChatBackend {
  invoke(req: ChatRequest): Promise<ModelReply>;
  /** `onText` receives the reply text so far after each delta. */
  stream(req: ChatRequest, onText: (textSoFar: string) => void): Promise<ModelReply>;
}

/** The most reply text (content plus tool-call arguments) lbot takes from an upstream: it must fit a wire line. */
export const MAX_REPLY_CHARS = 1_000_000;

/** Refuses a reply that grew past MAX_REPLY_CHARS (a runaway or hostile upstream). */
export function checkReplySize(model_id: string, chars: number): void {
  if (chars > MAX_REPLY_CHARS) {
    throw new ApiError('payload_too_large', `model ${model_id}: the reply is over ${MAX_REPLY_CHARS} characters`, 'reply_too_large', {
      model_id,
      limit: MAX_REPLY_CHARS,
    });
  }
}

export function usageOf(prompt: number | null | undefined, completion: number | null | undefined): ModelUsage | null {
  if (typeof prompt !== 'number' && typeof completion !== 'number') return null;
  const p = prompt ?? 0;
  const c = completion ?? 0;
  return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
}

/** Accumulates streamed tool-call deltas by their index; a call is complete once the stream ends. */
export class ToolCallAccumulator {
  private readonly calls = new Map<number, { id: string; name: string; arguments: string }>();
  /** Characters of names and arguments so far. */
  size = 0;

  add(index: number, part: { id?: string | null | undefined; name?: string | null | undefined; arguments?: string | null | undefined }): void {
    const cur = this.calls.get(index) ?? { id: '', name: '', arguments: '' };
    if (part.id) cur.id = part.id;
    if (part.name) cur.name += part.name;
    if (part.arguments) cur.arguments += part.arguments;
    this.size += (part.name?.length ?? 0) + (part.arguments?.length ?? 0);
    this.calls.set(index, cur);
  }

  done(): ToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => ({ id: c.id || `call_${index}`, type: 'function', function: { name: c.name, arguments: c.arguments || '{}' } }));
  }
}

const THINK_BLOCK = /<think>[\s\S]*?<\/think>\s*/g;

/** Removes `<think>…</think>` blocks; an unclosed trailing block (mid-stream) is hidden too. */
export function stripThink(text: string): string {
  const closed = text.replace(THINK_BLOCK, '');
  const open = closed.indexOf('<think>');
  return open === -1 ? closed : closed.slice(0, open);
}

/** The text of a message's content, for counting and for the fake provider. */
export function contentText(content: Message['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
}
