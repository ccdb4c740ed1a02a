// Which state scope an operator means: a raw `--scope-key`, or `--conversation ID` / `--actor ID` (with
// `--runner` / `--binding` when several runners or bindings keep state there), read back into a scope key.
import { LbotError } from '../errors.js';
import { encodeScopeKey, scopeParts, type ScopeIdentity } from '../stores/state-scope-key.js';
import { parseScopeKey } from './state-scope.js';

export type StateTarget = {
  scopeKey?: string | undefined;
  conversation?: string | undefined;
  thread?: string | undefined;
  actor?: string | undefined;
  actorType?: string | undefined;
  runner?: string | undefined;
  binding?: string | undefined;
};

/** True when `scopeKey` (as stored) belongs to the target's conversation or actor (and runner/binding when named). */
export function scopeKeyMatches(scopeKey: string, t: StateTarget): boolean {
  let parsed: ReturnType<typeof parseScopeKey>;
  try {
    parsed = parseScopeKey(scopeKey);
  } catch {
    return false;
  }
  const id = parsed.identity;
  if (t.runner !== undefined && id.runner_id !== t.runner) return false;
  if (t.binding !== undefined && id.binding_identity !== t.binding) return false;
  if (t.conversation !== undefined)
    return parsed.scope === 'conversation' && id.conversation_id === t.conversation && (t.thread === undefined || id.thread_id === t.thread);
  if (t.actor !== undefined) return parsed.scope === 'actor' && id.actor_id === t.actor && (t.actorType === undefined || id.actor_type === t.actorType);
  return true;
}

/**
 * The one scope key a target names. `known` are the scope keys state is kept under; a conversation or actor
 * with state under several runners or bindings needs `--runner` / `--binding`. With `create`, a scope that
 * has no state yet is built from `--runner` and `--binding`.
 */
export function resolveScopeKey(t: StateTarget, known: readonly string[], create: boolean): string {
  const named = [t.scopeKey, t.conversation, t.actor].filter((x) => x !== undefined).length;
  if (named !== 1)
    throw new LbotError('invalid_argument', 'name the state scope with one of --conversation ID, --actor ID or --scope-key KEY', {
      hint: 'lbot conversations lists conversation ids; lbot state list shows scope keys',
    });
  if (t.scopeKey !== undefined) {
    parseScopeKey(t.scopeKey);
    return t.scopeKey;
  }
  const what = t.conversation !== undefined ? `conversation ${t.conversation}` : `actor ${t.actor ?? ''}`;
  const matches = [...new Set(known.filter((k) => scopeKeyMatches(k, t)))];
  if (matches.length === 1 && matches[0] !== undefined) return matches[0];
  if (matches.length > 1)
    throw new LbotError('invalid_argument', `${what} has state under ${matches.length} scopes: ${matches.join(', ')}`, {
      hint: 'pick one with --runner ID and --binding ID (or --scope-key)',
      details: { scope_keys: matches },
    });
  if (!create || t.runner === undefined || t.binding === undefined)
    throw new LbotError('not_found', `no state for ${what}${t.runner ? ` under runner ${t.runner}` : ''}`, {
      hint: create ? 'to start state there, name the runner and binding: --runner ID --binding ID' : 'lbot state list shows where state is kept',
    });
  const id: ScopeIdentity = {
    runner_id: t.runner,
    binding_identity: t.binding,
    conversation_id: t.conversation ?? null,
    thread_id: t.thread ?? null,
    actor_type: t.actor !== undefined ? (t.actorType ?? 'user') : null,
    actor_id: t.actor ?? null,
    subject_type: null,
    subject_id: null,
  };
  const scope = t.conversation !== undefined ? 'conversation' : 'actor';
  const parts = scopeParts(scope, id);
  if (!parts) throw new LbotError('invalid_argument', `cannot build a ${scope} scope key for ${what}`);
  return encodeScopeKey(scope, parts);
}
