// The request's context: prompt, skills, guidance, checkpoint summary, history pulled through the API and
// the user message, kept inside the token budget by compacting older turns.
import type { Message, RunContext, RunnerApi, TranscriptItem } from 'lbot/sdk';
import type { LocalAgentConfig } from './config.js';
import { CHECKPOINT_KEY, opaqueIds, parseCheckpoint, summarize, summaryMessage, type Checkpoint } from './compaction.js';
import type { LlmTool, UsageTotal } from './model-call.js';
import type { Counter } from './tokens.js';

export type HistoryItem = { seq: number; message: Message };

/** The conversation's recent transcript (one page), fetched before the checkpoint is known. */
export async function fetchHistory(ctx: RunContext, api: RunnerApi, cfg: LocalAgentConfig, signal: AbortSignal): Promise<readonly TranscriptItem[]> {
  if (!ctx.context.available_apis.history_page || cfg['context-history-fetch-limit'] === 0) return [];
  return (await api.history.page({ limit: cfg['context-history-fetch-limit'] }, { signal })).items;
}

/** The history before this event, oldest first, after the checkpoint when there is one. */
export function historyAfter(ctx: RunContext, items: readonly TranscriptItem[], checkpoint: Checkpoint | null): HistoryItem[] {
  const after = checkpoint?.through_seq ?? -1;
  return items
    .filter((item) => item.event_id !== ctx.event.event_id && (item.seq ?? 0) > after)
    .map((item) => toHistory(item))
    .filter((h): h is HistoryItem => h !== null)
    .sort((a, b) => a.seq - b.seq);
}

function toHistory(item: TranscriptItem): HistoryItem | null {
  if (item.item_type !== 'message' || (item.role !== 'user' && item.role !== 'assistant')) return null;
  const content = item.content ?? '';
  if (content.trim() === '') return null;
  return { seq: item.seq ?? 0, message: { role: item.role, content } };
}

export async function readCheckpoint(ctx: RunContext, api: RunnerApi, signal: AbortSignal): Promise<Checkpoint | null> {
  const inline = parseCheckpoint(ctx.state.conversation[CHECKPOINT_KEY]);
  if (inline || !ctx.context.available_apis.state || !ctx.conversation?.conversation_id) return inline;
  return parseCheckpoint(await api.state.get('conversation', CHECKPOINT_KEY, { signal }));
}

export type ContextParts = {
  /** Prompt, skills, guidance: always sent. */
  head: Message[];
  history: HistoryItem[];
  user: Message;
  tools: LlmTool[];
  checkpoint: Checkpoint | null;
};

export type BuiltContext = { messages: Message[]; checkpoint: Checkpoint | null; compacted: boolean };

export function assemble(parts: Pick<ContextParts, 'head' | 'user'>, checkpoint: Checkpoint | null, history: readonly HistoryItem[]): Message[] {
  return [...parts.head, ...(checkpoint ? [summaryMessage(checkpoint)] : []), ...history.map((h) => h.message), parts.user];
}

/**
 * Fits the context into `budget` tokens. When it does not fit (or `harder`), history older than the
 * newest `keep-recent` tokens is summarized into a new checkpoint, saved for the next run.
 */
export async function fitContext(
  ctx: RunContext,
  api: RunnerApi,
  cfg: LocalAgentConfig,
  parts: ContextParts,
  opts: { counter: Counter; budget: number; model_id: string; usage: UsageTotal; harder: boolean; signal: AbortSignal; warn(line: string): void },
): Promise<BuiltContext> {
  const messages = assemble(parts, parts.checkpoint, parts.history);
  if (!opts.harder && (await opts.counter.fits(messages, parts.tools, opts.budget))) return { messages, checkpoint: parts.checkpoint, compacted: false };
  const keepBudget = opts.harder ? Math.floor(cfg['context-keep-recent-tokens'] / 4) : cfg['context-keep-recent-tokens'];
  const fixed = await opts.counter.messages(assemble(parts, parts.checkpoint, []), parts.tools);
  const room = Math.max(0, Math.min(keepBudget, opts.budget - fixed - cfg['context-summary-tokens']));
  const kept: HistoryItem[] = [];
  let used = 0;
  for (let i = parts.history.length - 1; i >= 0; i--) {
    const item = parts.history[i];
    if (!item) continue;
    const n = await opts.counter.messages([item.message]);
    if (used + n > room) break;
    used += n;
    kept.unshift(item);
  }
  const older = parts.history.slice(0, parts.history.length - kept.length);
  if (older.length === 0) {
    // Nothing left to compact: the request goes as it is and the model's answer decides.
    return { messages: assemble(parts, parts.checkpoint, kept), checkpoint: parts.checkpoint, compacted: false };
  }
  const { summary, usage } = await summarize(api, opts.model_id, [...older.map((h) => h.message)], parts.checkpoint, {
    summaryTokens: cfg['context-summary-tokens'],
    signal: opts.signal,
  });
  opts.usage.add(usage);
  const through = older.at(-1)?.seq ?? parts.checkpoint?.through_seq ?? 0;
  const texts = older.map((h) => (typeof h.message.content === 'string' ? h.message.content : ''));
  const checkpoint: Checkpoint = {
    version: 1,
    through_seq: through,
    summary,
    ids: opaqueIds(texts, parts.checkpoint?.ids ?? []),
    compactions: (parts.checkpoint?.compactions ?? 0) + 1,
  };
  if (ctx.context.available_apis.state && ctx.conversation?.conversation_id) {
    try {
      await api.state.set('conversation', CHECKPOINT_KEY, checkpoint, { signal: opts.signal });
    } catch (err) {
      if (opts.signal.aborted) throw err;
      opts.warn(`the compaction checkpoint was not saved: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { messages: assemble(parts, checkpoint, kept), checkpoint, compacted: true };
}
