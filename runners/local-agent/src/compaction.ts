// Older turns compacted into a structured summary (goal, constraints, progress, decisions, next steps),
// kept as a checkpoint in the conversation's state so the next run pulls only the history after it.
import { z, type Message, type ModelUsage, type RunnerApi } from 'lbot/sdk';

export const CHECKPOINT_KEY = 'local_agent.checkpoint';

const Line = z.string().transform((s) => s.slice(0, 2_000));
const Lines = z
  .array(z.unknown())
  .default([])
  .transform((xs) =>
    xs
      .filter((x): x is string => typeof x === 'string')
      .map((x) => x.slice(0, 2_000))
      .slice(0, 50),
  );

export const SummarySchema = z.looseObject({
  goal: Line.default(''),
  constraints: Lines,
  progress: Lines,
  decisions: Lines,
  next_steps: Lines,
});
export type Summary = z.infer<typeof SummarySchema>;

export const CheckpointSchema = z.looseObject({
  version: z.literal(1),
  /** Transcript seq of the last compacted item: the next run reads history after it. */
  through_seq: z.number().int().nonnegative(),
  summary: SummarySchema,
  /** Opaque ids from the compacted messages, verbatim. */
  ids: z.array(z.string().max(500)).max(200).default([]),
  compactions: z.number().int().nonnegative().default(1),
});
export type Checkpoint = z.infer<typeof CheckpointSchema>;

export function parseCheckpoint(value: unknown): Checkpoint | null {
  const parsed = CheckpointSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

const OPAQUE = [
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
  /https?:\/\/[^\s"'<>\\)]+/g,
  /(?:\/[\w.@%+=:,~-]+){2,}/g,
  /\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z][\w-]*[_-][\w-]{5,}\b/g,
  /\b[0-9a-f]{12,}\b/gi,
];
const MAX_IDS = 200;

/** Ids, paths and URLs of `texts` that a summary must not paraphrase, first occurrence first. */
export function opaqueIds(texts: readonly string[], keep: readonly string[] = []): string[] {
  const out = new Set(keep);
  for (const text of texts) for (const re of OPAQUE) for (const m of text.match(re) ?? []) if (out.size < MAX_IDS && m.length <= 500) out.add(m);
  return [...out];
}

function textOf(m: Message): string {
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return m.content.map((p) => (typeof p.text === 'string' ? p.text : '')).join(' ');
  return '';
}

/** The system message that carries a checkpoint into a model request. */
export function summaryMessage(cp: Checkpoint): Message {
  const s = cp.summary;
  const list = (title: string, xs: readonly string[]) => (xs.length > 0 ? `${title}:\n${xs.map((x) => `- ${x}`).join('\n')}` : '');
  const body = [
    s.goal ? `Goal: ${s.goal}` : '',
    list('Constraints', s.constraints),
    list('Progress', s.progress),
    list('Decisions', s.decisions),
    list('Next steps', s.next_steps),
    cp.ids.length > 0 ? `Identifiers (verbatim): ${cp.ids.join(' ')}` : '',
  ]
    .filter(Boolean)
    .join('\n\n');
  return { role: 'system', content: `Summary of the earlier conversation (older messages were compacted):\n\n${body}` };
}

const INSTRUCTIONS =
  'You compact a conversation into a checkpoint for the assistant that continues it. Answer with one JSON object and nothing else, ' +
  'with the keys "goal" (string), "constraints", "progress", "decisions" and "next_steps" (arrays of short strings). ' +
  'Merge the previous checkpoint, if any. Keep identifiers, file paths, URLs, numbers and names exactly as written.';

function extractJson(text: string): unknown {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return null;
  }
}

/** Asks the model for the summary of `older` (merged with `previous`); a reply that is not the JSON asked for is kept as progress text. */
export async function summarize(
  api: RunnerApi,
  model_id: string,
  older: readonly Message[],
  previous: Checkpoint | null,
  opts: { summaryTokens: number; signal: AbortSignal },
): Promise<{ summary: Summary; usage: ModelUsage | null }> {
  const transcript = older.map((m) => `${m.role}: ${textOf(m)}`).join('\n\n');
  const messages: Message[] = [
    { role: 'system', content: `${INSTRUCTIONS} Stay under ${opts.summaryTokens} tokens.` },
    {
      role: 'user',
      content: `${previous ? `Previous checkpoint:\n${JSON.stringify(previous.summary)}\n\n` : ''}Conversation to compact:\n\n${transcript}`,
    },
  ];
  const reply = await api.call('models.invoke', { model_id, messages, tools: [] }, { signal: opts.signal });
  const text = textOf(reply.message).slice(0, 200_000);
  const parsed = SummarySchema.safeParse(extractJson(text));
  const summary = parsed.success ? parsed.data : SummarySchema.parse({ goal: previous?.summary.goal ?? '', progress: [text.slice(0, 2_000)] });
  return { summary, usage: reply.usage };
}
