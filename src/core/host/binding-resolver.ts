// Binding resolution for an incoming event (runner-protocol.md §3.4): enabled, event type, scope, filters, precedence.
import type { Binding, EventFilter } from '../protocol/binding.js';
import type { EventEnvelope } from '../protocol/event.js';

const SCOPE_RANK = { pipeline: 3, bot: 2, workspace: 1, global: 0 } as const;

function fieldValue(e: EventEnvelope, field: EventFilter['field']): string | null {
  switch (field) {
    case 'actor.actor_type':
      return e.actor?.actor_type ?? null;
    case 'actor.actor_id':
      return e.actor?.actor_id ?? null;
    case 'subject.subject_type':
      return e.subject?.subject_type ?? null;
    case 'subject.subject_id':
      return e.subject?.subject_id ?? null;
    default:
      return e[field];
  }
}

function filterMatches(e: EventEnvelope, f: EventFilter): boolean {
  const v = fieldValue(e, f.field);
  switch (f.operator) {
    case 'eq':
      return v === f.value;
    case 'neq':
      return v !== f.value;
    case 'in':
      return Array.isArray(f.value) && f.value.includes(v);
    case 'prefix':
      return typeof f.value === 'string' && typeof v === 'string' && v.startsWith(f.value);
  }
}

function scopeMatches(e: EventEnvelope, b: Binding, route: string | null): boolean {
  switch (b.scope.scope_type) {
    case 'global':
      return true;
    case 'workspace':
      return b.scope.scope_id === e.workspace_id;
    case 'bot':
      return b.scope.scope_id === e.bot_id;
    case 'pipeline':
      return b.scope.scope_id === null || b.scope.scope_id === route;
  }
}

/**
 * Bindings that handle the event, in the documented order: most specific scope first, then higher
 * priority, then binding_id ascending. `route` is the webhook route / channel the event arrived on.
 */
export function resolveBindings(event: EventEnvelope, bindings: readonly Binding[], route: string | null = null): Binding[] {
  return bindings
    .filter((b) => b.enabled && (b.event_types.includes(event.event_type) || b.event_types.includes('*')))
    .filter((b) => scopeMatches(event, b, route) && b.filters.every((f) => filterMatches(event, f)))
    .sort((a, b) => SCOPE_RANK[b.scope.scope_type] - SCOPE_RANK[a.scope.scope_type] || b.priority - a.priority || a.binding_id.localeCompare(b.binding_id));
}
