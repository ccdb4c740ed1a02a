// One model turn: streamed (deltas as they arrive) or plain, with fallback across the candidates until
// one has produced output, and the usage of every call added up.
import { ApiCallError, type Message, type ModelReply, type ModelUsage, type RunnerApi } from 'lbot/sdk';

export type LlmTool = { name: string; description: string; parameters: Record<string, unknown> };

export type TurnRequest = { messages: Message[]; tools: LlmTool[]; remove_think: boolean };

/** What a turn yields: the text so far while streaming, then the whole reply. */
export type TurnEvent = { kind: 'text'; text: string } | { kind: 'reply'; reply: ModelReply; model_id: string };

export class UsageTotal {
  prompt_tokens = 0;
  completion_tokens = 0;
  total_tokens = 0;
  calls = 0;

  add(usage: ModelUsage | null): void {
    this.calls += 1;
    if (!usage) return;
    this.prompt_tokens += usage.prompt_tokens;
    this.completion_tokens += usage.completion_tokens;
    this.total_tokens += usage.total_tokens;
  }

  toJSON(): Record<string, number> {
    return { prompt_tokens: this.prompt_tokens, completion_tokens: this.completion_tokens, total_tokens: this.total_tokens, model_calls: this.calls };
  }
}

const OVERFLOW = /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|input is too long|reduce the length/i;

/** True for an upstream refusal that says the request does not fit the model's context. */
export function isContextOverflow(err: unknown): boolean {
  if (!(err instanceof ApiCallError)) return false;
  const details = JSON.stringify(err.details);
  return OVERFLOW.test(err.message) || OVERFLOW.test(details);
}

/**
 * Runs one call, turning its chunk callbacks into text events the caller yields as they come. Only
 * the newest cumulative text is kept while the caller is busy: deltas replace each other.
 */
async function* streamed(run: (onText: (text: string) => void) => Promise<ModelReply>, model_id: string): AsyncGenerator<TurnEvent> {
  let pending: string | null = null;
  let wake: (() => void) | null = null;
  let outcome: { ok: true; reply: ModelReply } | { ok: false; error: unknown } | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  void run((text) => {
    pending = text;
    poke();
  }).then(
    (reply) => {
      outcome = { ok: true, reply };
      poke();
    },
    (error: unknown) => {
      outcome = { ok: false, error };
      poke();
    },
  );
  for (;;) {
    if (pending !== null) {
      const text: string = pending;
      pending = null;
      yield { kind: 'text', text };
      continue;
    }
    const done = outcome as { ok: true; reply: ModelReply } | { ok: false; error: unknown } | null;
    if (done) {
      if (!done.ok) throw done.error;
      yield { kind: 'reply', reply: done.reply, model_id };
      return;
    }
    await new Promise<void>((resolve) => (wake = resolve));
  }
}

/** One call to one model: streamed when `stream`, else plain. */
export function callModel(api: RunnerApi, model_id: string, req: TurnRequest, opts: { stream: boolean; signal: AbortSignal }): AsyncGenerator<TurnEvent> {
  const args = { model_id, messages: req.messages, tools: req.tools, remove_think: req.remove_think };
  if (opts.stream) {
    return streamed(
      (onText) =>
        api.models.streamReply(
          args,
          (chunk) => {
            if (typeof chunk.content === 'string') onText(chunk.content);
          },
          { signal: opts.signal },
        ),
      model_id,
    );
  }
  return streamed(() => api.call('models.invoke', args, { signal: opts.signal }), model_id);
}

/** A failure of a model turn, with whether any output reached the user before it. */
export class TurnError extends Error {
  override name = 'TurnError';
  constructor(
    readonly error: unknown,
    readonly model_id: string,
    readonly afterOutput: boolean,
  ) {
    super(error instanceof Error ? error.message : String(error));
  }
}

/**
 * Tries `candidates` in order while none has produced output (the commit point: the first text or a
 * whole reply). A failure after that point is not retried on another model.
 */
export async function* turnWithFallback(
  api: RunnerApi,
  candidates: readonly string[],
  req: TurnRequest,
  opts: { stream: boolean; signal: AbortSignal; warn(line: string): void },
): AsyncGenerator<TurnEvent> {
  let last: unknown = new Error('no model to call');
  for (const [index, model_id] of candidates.entries()) {
    let produced = false;
    try {
      for await (const event of callModel(api, model_id, req, opts)) {
        produced = true;
        yield event;
      }
      return;
    } catch (err) {
      if (produced || opts.signal.aborted || isContextOverflow(err) || index === candidates.length - 1) throw new TurnError(err, model_id, produced);
      opts.warn(`model ${model_id} failed before any output (${err instanceof Error ? err.message : String(err)}); trying ${candidates[index + 1] ?? ''}`);
      last = err;
    }
  }
  throw new TurnError(last, candidates.at(-1) ?? '', false);
}
