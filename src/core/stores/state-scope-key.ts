// The encoding of state scope keys (runner-protocol.md §8.5, escaped): `<scope>:<part>:<part>…`, where every
// part has `%` written as `%25` and `:` as `%3A`, so distinct scopes never share a key (conversation ids and
// binding ids contain colons). Also reads the unescaped keys of schema versions before 3, for the migration.
import { StateScopeSchema, type StateScope } from '../protocol/binding.js';
import { parseRunnerId } from '../protocol/runner-id.js';
import type { StateContextColumns } from './types.js';

/** The identity columns of a state row, as stored in `agent_runner_state`. */
export type ScopeIdentity = Omit<StateContextColumns, 'bot_id' | 'workspace_id'>;

function escapePart(part: string): string {
  return part.replaceAll('%', '%25').replaceAll(':', '%3A');
}

function unescapePart(part: string): string | null {
  if (/%(?!25|3A)/.test(part)) return null;
  return part.replaceAll('%3A', ':').replaceAll('%25', '%');
}

/** Joins escaped parts under a scope: injective, the parts come back with decodeScopeKey. */
export function encodeScopeKey(scope: StateScope, parts: readonly string[]): string {
  return [scope, ...parts.map(escapePart)].join(':');
}

/** Reads a scope key back into its scope and parts; null when it is not an escaped scope key. */
export function decodeScopeKey(key: string): { scope: StateScope; parts: string[] } | null {
  const [head, ...rest] = key.split(':');
  const scope = StateScopeSchema.safeParse(head);
  if (!scope.success || rest.length < 2) return null;
  const parts: string[] = [];
  for (const p of rest) {
    const part = unescapePart(p);
    if (part === null || part === '') return null;
    parts.push(part);
  }
  if (!parseRunnerId(parts[0] ?? '')) return null;
  return { scope: scope.data, parts };
}

/** The parts of a scope key after runner and binding, from the identity; null when the identity is missing. */
export function scopeParts(scope: StateScope, id: ScopeIdentity): string[] | null {
  const base = [id.runner_id, id.binding_identity];
  switch (scope) {
    case 'runner':
      return base;
    case 'conversation':
      if (!id.conversation_id) return null;
      return id.thread_id ? [...base, id.conversation_id, id.thread_id] : [...base, id.conversation_id];
    case 'actor':
      return id.actor_id ? [...base, id.actor_type || 'user', id.actor_id] : null;
    case 'subject':
      return id.subject_id ? [...base, id.subject_type || 'unknown', id.subject_id] : null;
  }
}

/** Part counts a key of each scope has (runner and binding included). */
const PART_COUNTS: Record<StateScope, readonly number[]> = { runner: [2], conversation: [3, 4], actor: [4], subject: [4] };

/** Every way (at most `max`) to read an unescaped key's remainder as parts of `scope`. */
function legacyDecodings(scope: StateScope, rest: string, max: number): string[][] {
  const tokens = rest.split(':');
  const found: string[][] = [];
  const split = (from: number, left: number, acc: string[]): void => {
    if (found.length >= max) return;
    if (left === 1) {
      const last = tokens.slice(from).join(':');
      if (last && from < tokens.length) found.push([...acc, last]);
      return;
    }
    for (let end = from + 1; end <= tokens.length - left + 1; end++) {
      const part = tokens.slice(from, end).join(':');
      if (!part) continue;
      if (acc.length === 0 && !parseRunnerId(part)) continue;
      split(end, left - 1, [...acc, part]);
      if (found.length >= max) return;
    }
  };
  for (const n of PART_COUNTS[scope]) split(0, n, []);
  return found;
}

/**
 * The escaped key for a key written before schema version 3 (parts joined with `:` unescaped), or null
 * when it cannot be read back with certainty. The row's own identity columns decide when they rebuild
 * the old key exactly (they were written with it); otherwise the key must have exactly one reading.
 */
export function migrateLegacyScopeKey(scope: StateScope, oldKey: string, id: ScopeIdentity): string | null {
  const prefix = `${scope}:`;
  if (!oldKey.startsWith(prefix)) return null;
  const fromColumns = scopeParts(scope, id);
  if (fromColumns && [scope, ...fromColumns].join(':') === oldKey) return encodeScopeKey(scope, fromColumns);
  const readings = legacyDecodings(scope, oldKey.slice(prefix.length), 2);
  const only = readings.length === 1 ? readings[0] : undefined;
  return only ? encodeScopeKey(scope, only) : null;
}
