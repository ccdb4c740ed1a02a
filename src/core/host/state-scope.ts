// State scope keys and the key alias (runner-protocol.md §8.4–§8.5).
import type { EventEnvelope } from '../protocol/event.js';
import type { StateScope } from '../protocol/binding.js';
import { LbotError } from '../errors.js';
import { decodeScopeKey, encodeScopeKey, scopeParts, type ScopeIdentity } from '../stores/state-scope-key.js';

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

/**
 * Reads a scope key (as `lbot state list` prints it) back into its scope and the identity columns
 * buildScopeKeys took it from; refused with invalid_argument when it is not a scope key.
 */
export function parseScopeKey(scopeKey: string): { scope: StateScope; identity: ScopeIdentity } {
  const decoded = decodeScopeKey(scopeKey);
  const [runner_id, binding_identity, first = null, second = null, ...extra] = decoded?.parts ?? [];
  const bad = (): LbotError =>
    new LbotError('invalid_argument', `--scope-key ${scopeKey} is not a state scope key`, { hint: 'copy scope_key from `lbot state list --json`' });
  if (!decoded || !runner_id || !binding_identity || extra.length > 0) throw bad();
  const identity: ScopeIdentity = {
    runner_id,
    binding_identity,
    conversation_id: null,
    thread_id: null,
    actor_type: null,
    actor_id: null,
    subject_type: null,
    subject_id: null,
  };
  switch (decoded.scope) {
    case 'runner':
      if (first !== null) throw bad();
      break;
    case 'conversation':
      if (first === null) throw bad();
      Object.assign(identity, { conversation_id: first, thread_id: second });
      break;
    case 'actor':
    case 'subject':
      if (first === null || second === null) throw bad();
      Object.assign(identity, decoded.scope === 'actor' ? { actor_type: first, actor_id: second } : { subject_type: first, subject_id: second });
      break;
  }
  return { scope: decoded.scope, identity };
}
