// What the prompt adds to the configured messages: the skill index in the Agent Skills format, the box
// guidance when `exec` is offered, and knowledge-base entries around the user's message.
import { z, type Message, type RunContext, type RunnerApi } from 'lbot/sdk';
import type { LocalAgentConfig } from './config.js';
import type { LlmTool } from './model-call.js';
import { textBound, type Counter } from './tokens.js';

const SKILL_MOUNT = '/workspace/.skills';
const MAX_SKILLS = 100;

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function unescapeXml(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

export type Skill = { name: string; description: string };

/** The skills the `activate` tool offers, read from its description's `<available_skills>` block. */
export function skillsOf(activate: LlmTool | undefined): Skill[] {
  if (!activate) return [];
  const block = /<available_skills>([\s\S]*?)<\/available_skills>/.exec(activate.description)?.[1] ?? '';
  const skills: Skill[] = [];
  for (const m of block.matchAll(/<skill>\s*<name>([^<]{1,200})<\/name>\s*(?:<description>([^<]{0,4000})<\/description>)?/g)) {
    if (skills.length >= MAX_SKILLS) break;
    const name = unescapeXml(m[1] ?? '').trim();
    if (/^[\w.-]+$/.test(name)) skills.push({ name, description: unescapeXml(m[2] ?? '').trim() });
  }
  return skills;
}

/** The Agent Skills prompt: name, description and location of each skill, and how to use one. */
export function skillsMessage(skills: readonly Skill[]): Message | null {
  if (skills.length === 0) return null;
  const items = skills.map(
    (s) =>
      `<skill>\n<name>${escapeXml(s.name)}</name>\n<description>${escapeXml(s.description)}</description>\n<location>${SKILL_MOUNT}/${escapeXml(s.name)}/SKILL.md</location>\n</skill>`,
  );
  return {
    role: 'system',
    content:
      'Skills extend what you can do. When a request matches a skill by its description, call the `activate` tool with its name first: ' +
      'its instructions arrive as the result, then follow them. Do not use a skill you have not activated.\n\n' +
      `<available_skills>\n${items.join('\n')}\n</available_skills>`,
  };
}

export const EXEC_GUIDANCE: Message = {
  role: 'system',
  content:
    'You can run commands in a sandbox with the `exec` tool. Prefer it for exact calculations, statistics, parsing structured data and running code; ' +
    'answer from what the command printed. Files live under /workspace: use /workspace paths for file tasks instead of asking the user for directories. ' +
    'Do not paste the script you ran unless the user asks for it.',
};

const RetrievedSchema = z.looseObject({
  content: z.union([z.string(), z.array(z.looseObject({ text: z.string().optional() }))]).optional(),
  text: z.string().optional(),
});
const MAX_ENTRY_CHARS = 20_000;
const MAX_RERANK_DOCUMENTS = 64;

function entryText(raw: unknown): string | null {
  const r = RetrievedSchema.safeParse(raw);
  if (!r.success) return null;
  const c = r.data.content;
  const text = typeof c === 'string' ? c : Array.isArray(c) ? c.map((p) => p.text ?? '').join(' ') : (r.data.text ?? '');
  return text.trim() === '' ? null : text.slice(0, MAX_ENTRY_CHARS);
}

/**
 * Retrieves from every granted knowledge base, reranks when a rerank model is granted, and keeps the
 * entries that fit in `budget` tokens. Errors of one knowledge base are warnings: the run goes on.
 */
export async function retrieveKnowledge(
  ctx: RunContext,
  api: RunnerApi,
  cfg: LocalAgentConfig,
  query: string,
  opts: { counter: Counter; budget: number; signal: AbortSignal; warn(line: string): void },
): Promise<string[]> {
  if (query.trim() === '') return [];
  const kbs = ctx.resources.knowledge_bases.map((k) => k.kb_id);
  let entries: string[] = [];
  for (const kb_id of kbs) {
    try {
      const results = await api.knowledge.retrieve({ kb_id, query_text: query, top_k: cfg['retrieval-top-k'] }, { signal: opts.signal });
      for (const r of results.slice(0, 100)) {
        const t = entryText(r);
        if (t) entries.push(t);
      }
    } catch (err) {
      if (opts.signal.aborted) throw err;
      opts.warn(`knowledge base ${kb_id}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const rerank = cfg['rerank-model'];
  if (entries.length > 0 && rerank && ctx.resources.models.some((m) => m.model_id === rerank)) {
    try {
      const docs = entries.slice(0, MAX_RERANK_DOCUMENTS);
      const ranked = await api.models.rerank({ model_id: rerank, query, documents: docs, top_k: cfg['rerank-top-k'] }, { signal: opts.signal });
      entries = [...ranked]
        .sort((a, b) => b.relevance_score - a.relevance_score)
        .map((r) => docs[r.index])
        .filter((d): d is string => d !== undefined)
        .slice(0, cfg['rerank-top-k']);
    } catch (err) {
      if (opts.signal.aborted) throw err;
      opts.warn(`rerank with ${rerank} failed, the retrieval order is kept: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  // When even their byte bounds fit, every entry does, and none needs counting.
  if (entries.reduce((sum, e) => sum + textBound(e), 0) <= opts.budget) return entries;
  const kept: string[] = [];
  let used = 0;
  for (const e of entries) {
    const n = await opts.counter.text(e);
    if (used + n > opts.budget) continue;
    used += n;
    kept.push(e);
  }
  return kept;
}

/** The user's text wrapped with the retrieved entries, numbered `[1]`, `[2]`, … */
export function withKnowledge(userText: string, entries: readonly string[]): string {
  if (entries.length === 0) return userText;
  const numbered = entries.map((e, i) => `[${i + 1}] ${e}`).join('\n\n');
  return (
    'The entries below were retrieved from knowledge bases for this message. Use them when they help, say so when they do not cover the question, ' +
    "and reply in the user's language.\n\n" +
    `<context>\n${numbered}\n</context>\n\n<user_message>\n${userText}\n</user_message>`
  );
}
