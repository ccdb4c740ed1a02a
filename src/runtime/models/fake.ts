// The scripted `fake` provider (tests and CI): the configured reply or an echo of the last user text,
// term-overlap rerank and deterministic hash embeddings. Usage counts words, so it is never null.
import { createHash } from 'node:crypto';
import type { ModelConfig } from '../../core/config.js';
import type { Message } from '../../core/protocol/context.js';
import type { ModelReply } from '../../core/protocol/proxy.js';
import { contentText, usageOf } from './wire.js';

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

export function fakeReply(model: ModelConfig, messages: readonly Message[]): ModelReply {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  const content = model.reply ?? contentText(last?.content);
  const prompt = messages.reduce((n, m) => n + words(contentText(m.content)), 0);
  return { message: { role: 'assistant', content }, usage: usageOf(prompt, words(content)), finish_reason: 'stop', model: model.model ?? model.id };
}

export function fakeRerank(query: string, documents: readonly string[]): Array<{ index: number; relevance_score: number }> {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  return documents.map((doc, index) => {
    const text = doc.toLowerCase();
    return { index, relevance_score: terms.length ? terms.filter((t) => text.includes(t)).length / terms.length : 0 };
  });
}

/** 8 numbers in [-1, 1) from the SHA-256 of each input: equal texts, equal vectors. */
export function hashEmbedding(text: string, dims = 8): number[] {
  const digest = createHash('sha256').update(text).digest();
  return Array.from({ length: dims }, (_, i) => (digest[i % digest.length] ?? 0) / 128 - 1);
}

/**
 * A unit bag-of-words vector: each word, or the concept group it belongs to, hashes to one of `dims` slots.
 * Equal texts give equal vectors, and synonyms (one group) count as the same word.
 */
export function conceptEmbedding(text: string, dims: number, concepts: readonly (readonly string[])[]): number[] {
  const groupOf = new Map<string, string>();
  concepts.forEach((group, i) => group.forEach((w) => groupOf.set(w.toLowerCase(), `concept:${i}`)));
  const vec = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const key = groupOf.get(word) ?? word;
    const slot = createHash('sha256').update(key).digest().readUInt32BE(0) % dims;
    vec[slot] = (vec[slot] ?? 0) + 1;
  }
  const norm = Math.hypot(...vec);
  return norm === 0 ? vec : vec.map((v) => v / norm);
}

export function fakeEmbed(input: readonly string[]): { embeddings: number[][]; model: string | null; usage: ReturnType<typeof usageOf> } {
  return {
    embeddings: input.map((t) => hashEmbedding(t)),
    model: 'fake',
    usage: usageOf(
      input.reduce((n, t) => n + words(t), 0),
      0,
    ),
  };
}
