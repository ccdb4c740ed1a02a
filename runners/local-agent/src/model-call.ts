// One model turn: streamed (deltas as they arrive) or plain, with fallback across the candidates until
// one has produced output, and the usage of every call added up.
import { ApiCallError, type Message, type ModelReply, type ModelUsage, type RunnerApi } from 'lbot/sdk';

export type LlmTool = { name: string; description: string; parameters: Record<string, unknown> };

/**
 * One turn's request. `context`: the first `sent` messages are held by the host as context `id` (an earlier
 * call's answer), so only the ones after them are sent (docs/protocol.md "Model contexts").
 */
export type TurnRequest = { messages: Message[]; tools: LlmTool[]; remove_think: boolean; context?: { id: string; sent: number } | null };

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

const contextUnknown = (err: unknown) => err instanceof ApiCallError && err.details.reason === 'context_unknown';

/** One call to one model: streamed when `stream`, else plain. A context the host no longer holds is sent whole once. */
export function callModel(api: RunnerApi, model_id: string, req: TurnRequest, opts: { stream: boolean; signal: AbortSignal }): AsyncGenerator<TurnEvent> {
  const base = { model_id, tools: req.tools, remove_think: req.remove_think };
  const whole = { ...base, messages: req.messages, keep_context: true };
  const continued = req.context ? { ...base, messages: req.messages.slice(req.context.sent), context_id: req.context.id } : null;
  const send = (args: typeof whole | NonNullable<typeof continued>, onText: (text: string) => void): Promise<ModelReply> =>
    opts.stream
      ? api.models.streamReply(
          args,
          (chunk) => {
            if (typeof chunk.content === 'string') onText(chunk.content);
          },
          { signal: opts.signal },
        )
      : api.call('models.invoke', args, { signal: opts.signal });
  return streamed(async (onText) => {
    if (!continued) return await send(whole, onText);
    try {
      return await send(continued, onText);
    } catch (err) {
      if (!contextUnknown(err)) throw err;
      return await send(whole, onText);
    }
  }, model_id);
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
