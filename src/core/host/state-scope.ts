// State scope keys and the key alias (runner-protocol.md §8.4–§8.5).
import type { EventEnvelope } from '../protocol/event.js';
import type { StateScope } from '../protocol/binding.js';

export type ScopeKeys = Partial<Record<StateScope, string>>;

/** The only key alias: `conversation_id` → `external.conversation_id`. */
export function aliasStateKey(key: string): string {
  return key === 'conversation_id' ? 'external.conversation_id' : key;
}

/** Scope keys for one run; a scope whose identity the event lacks has no key. */
export function buildScopeKeys(runnerId: string, bindingIdentity: string, event: EventEnvelope): ScopeKeys {
  const base = `${runnerId}:${bindingIdentity}`;
  const keys: ScopeKeys = { runner: `runner:${base}` };
  if (event.conversation_id) {
    keys.conversation = `conversation:${base}:${event.conversation_id}${event.thread_id ? `:${event.thread_id}` : ''}`;
  }
  if (event.actor?.actor_id) keys.actor = `actor:${base}:${event.actor.actor_type || 'user'}:${event.actor.actor_id}`;
  if (event.subject?.subject_id) keys.subject = `subject:${base}:${event.subject.subject_type || 'unknown'}:${event.subject.subject_id}`;
  return keys;
}
