// Token counts come from the host (`models.count_tokens`); when it cannot count, the run stops rather
// than guess.
import { ApiCallError, type Message, type RunnerApi } from 'lbot/sdk';
import type { LlmTool } from './model-call.js';

/** The host could not count tokens for the model: the budget cannot be enforced. */
export class CountUnavailableError extends Error {
  override name = 'CountUnavailableError';
}

export type Counter = {
  readonly contextWindow: number | null;
  messages(messages: Message[], tools?: LlmTool[]): Promise<number>;
  /** Whether the messages and tools fit `budget` tokens; asks the host only when their bound does not. */
  fits(messages: Message[], tools: LlmTool[], budget: number): Promise<boolean>;
  text(text: string): Promise<number>;
};

/** The host's framing of a chat count: tokens a message, and for the reply (src/runtime/models/tokens.ts). */
const PER_MESSAGE = 3;
const PER_REPLY = 3;

/**
 * At least what the host counts for a text, without asking it: the host's encodings are byte-level BPE, where
 * a token stands for one UTF-8 byte or more. When a bound fits the budget the count does too, and a fresh host
 * need not load an encoding (a few hundred milliseconds) before the first model call.
 */
export function textBound(text: string): number {
  return Buffer.byteLength(text);
}

/** At least what the host counts for these messages and tools: a message's JSON holds every text the host counts of it (role, content, name, tool calls). */
export function tokenBound(messages: readonly Message[], tools: readonly LlmTool[]): number {
  let bound = messages.length > 0 ? PER_REPLY : 0;
  for (const m of messages) bound += PER_MESSAGE + textBound(JSON.stringify(m));
  for (const t of tools) bound += textBound(JSON.stringify(t));
  return bound;
}

export function createCounter(api: RunnerApi, model_id: string, signal: AbortSignal): Counter & { probe(): Promise<void> } {
  let contextWindow: number | null = null;
  const count = async (args: { messages?: Message[]; text?: string; tools?: LlmTool[] }): Promise<number> => {
    try {
      const r = await api.models.countTokens(
        { model_id, messages: args.messages ?? [], tools: args.tools ?? [], ...(args.text !== undefined ? { text: args.text } : {}) },
        { signal },
      );
      contextWindow = r.context_window;
      return r.tokens;
    } catch (err) {
      if (signal.aborted) throw err;
      const why =
        err instanceof ApiCallError
          ? `${err.code}${typeof err.details.reason === 'string' ? ` (${err.details.reason})` : ''}: ${err.error.message}`
          : String(err);
      throw new CountUnavailableError(
        `the host cannot count tokens for model ${model_id}, so the context budget cannot be kept: ${why}. Give the model a tokenizer (docs/models.md) or grant models: [count_tokens]`,
      );
    }
  };
  return {
    get contextWindow() {
      return contextWindow;
    },
    messages: (messages, tools) => count({ messages, tools: tools ?? [] }),
    fits: async (messages, tools, budget) => tokenBound(messages, tools) <= budget || (await count({ messages, tools })) <= budget,
    text: (text) => count({ text }),
    probe: async () => {
      await count({ text: '' });
    },
  };
}
