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
  text(text: string): Promise<number>;
};

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
    text: (text) => count({ text }),
    probe: async () => {
      await count({ text: '' });
    },
  };
}
