// Model contexts (docs/protocol.md "Model contexts"): a runner whose conversation only grows sends the
// messages added since an earlier call with the `context_id` that call answered, instead of the whole list
// again; an agent loop's calls stop costing time in proportion to the conversation. The host keeps the last
// few contexts of each live run, every message checked once when it arrived, and drops them when the run ends.
import { randomUUID } from 'node:crypto';
import type { Message } from '../protocol/context.js';
import { MAX_LINE_BYTES } from '../protocol/wire.js';
import { ApiError } from './api-error.js';

/** Contexts kept per run, most recently used first: room for a retry on a fallback model and a branch. */
export const CONTEXTS_PER_RUN = 4;
/** A context holds no more than one request line could carry. */
export const MAX_CONTEXT_BYTES = MAX_LINE_BYTES;

type Context = { messages: readonly Message[]; bytes: number };

/** What a model call asked for: its messages, and the context they continue or whether to keep one. */
export type ContextRequest = { messages: Message[]; context_id?: string | undefined; keep_context?: boolean | undefined };

export class ModelContexts {
  readonly #runs = new Map<string, Map<string, Context>>();

  /**
   * The whole message list of a call, and `keep` when the call continues a context or asked to keep one:
   * it stores that list as a new context and returns its id (called once the model has answered).
   */
  resolve(run_id: string, req: ContextRequest): { messages: Message[]; keep: (() => string) | null } {
    if (req.context_id === undefined) {
      if (req.keep_context !== true) return { messages: req.messages, keep: null };
      const bytes = this.#measure(req.messages, 0);
      return { messages: req.messages, keep: () => this.#store(run_id, { messages: req.messages, bytes }) };
    }
    const run = this.#runs.get(run_id);
    const base = run?.get(req.context_id);
    if (!run || !base) {
      throw new ApiError(
        'invalid_argument',
        `context ${req.context_id.slice(0, 64)} is not known to this run (it ended, was replaced by newer ones, or belongs to another run); send the whole message list`,
        'context_unknown',
        { context_id: req.context_id.slice(0, 64) },
      );
    }
    const bytes = this.#measure(req.messages, base.bytes);
    const messages = [...base.messages, ...req.messages];
    // Used again, so newest: the context a run keeps using stays while older branches are dropped.
    run.delete(req.context_id);
    run.set(req.context_id, base);
    return { messages, keep: () => this.#store(run_id, { messages, bytes }) };
  }

  /** Starts keeping contexts for a live run. */
  open(run_id: string): void {
    if (!this.#runs.has(run_id)) this.#runs.set(run_id, new Map());
  }

  /** Forgets every context of a run (its end). */
  drop(run_id: string): void {
    this.#runs.delete(run_id);
  }

  /** How many contexts a run holds now. */
  count(run_id: string): number {
    return this.#runs.get(run_id)?.size ?? 0;
  }

  #measure(added: readonly Message[], base: number): number {
    // UTF-8 bytes, as the line cap counts them: a string's length would count é as one.
    const bytes = base + (added.length === 0 ? 0 : Buffer.byteLength(JSON.stringify(added)));
    if (bytes > MAX_CONTEXT_BYTES) {
      throw new ApiError(
        'payload_too_large',
        `the messages of this call would make a context of ${bytes} bytes; the limit is ${MAX_CONTEXT_BYTES}`,
        'context_too_large',
        { limit: MAX_CONTEXT_BYTES },
      );
    }
    return bytes;
  }

  /** Keeps `ctx` under a new id; a run that has ended keeps nothing (the id then names no context). */
  #store(run_id: string, ctx: Context): string {
    const id = randomUUID();
    const run = this.#runs.get(run_id);
    if (!run) return id;
    run.set(id, ctx);
    for (const oldest of run.keys()) {
      if (run.size <= CONTEXTS_PER_RUN) break;
      run.delete(oldest);
    }
    return id;
  }
}
