// State scope keys and the key alias (runner-protocol.md §8.4–§8.5).
import type { EventEnvelope } from '../protocol/event.js';
import type { StateScope } from '../protocol/binding.js';
import { encodeScopeKey, scopeParts } from '../stores/state-scope-key.js';

export type ScopeKeys = Partial<Record<StateScope, string>>;

/** The only key alias: `conversation_id` → `external.conversation_id`. */
export function aliasStateKey(key: string): string {
  return key === 'conversation_id' ? 'external.conversation_id' : key;
}

/**
 * Scope keys for one run; a scope whose identity the event lacks has no key. Parts are escaped
 * (state-scope-key.ts), so ids containing `:` cannot make two scopes share a key.
 */
export function buildScopeKeys(runnerId: string, bindingIdentity: string, event: EventEnvelope): ScopeKeys {
  const id = {
    runner_id: runnerId,
    binding_identity: bindingIdentity,
    conversation_id: event.conversation_id,
    thread_id: event.thread_id,
    actor_type: event.actor?.actor_type ?? null,
    actor_id: event.actor?.actor_id ?? null,
    subject_type: event.subject?.subject_type ?? null,
    subject_id: event.subject?.subject_id ?? null,
  };
  const keys: ScopeKeys = {};
  for (const scope of ['runner', 'conversation', 'actor', 'subject'] as const) {
    const parts = scopeParts(scope, id);
    if (parts) keys[scope] = encodeScopeKey(scope, parts);
  }
  return keys;
}
