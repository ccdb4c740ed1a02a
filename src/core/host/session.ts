// Run sessions: the host-side record of a live run that every proxy call is authorized against (§6.1).
import type { Resources } from '../protocol/context.js';
import type { Permissions } from '../protocol/manifest.js';
import type { StatePolicy } from '../protocol/binding.js';
import type { ScopeKeys } from './state-scope.js';
import type { StateContextColumns } from '../stores/types.js';

export type RunSession = {
  run_id: string;
  runner_id: string;
  binding_id: string;
  plugin_identity: string;
  event_id: string;
  conversation_id: string | null;
  resources: Resources;
  permissions: Permissions;
  state_policy: StatePolicy;
  scope_keys: ScopeKeys;
  state_columns: StateContextColumns;
  deadline_at: number | null;
  started_at: number;
  last_activity_at: number;
  authorized: { model: Set<string>; tool: Set<string>; knowledge_base: Set<string>; file: Set<string> };
};

export type ResourceType = 'model' | 'tool' | 'knowledge_base' | 'file' | 'storage';

/** `isResourceAllowed` of §6.1. */
export function isResourceAllowed(session: RunSession, type: ResourceType, id: string): boolean {
  if (type === 'storage') {
    if (id === 'plugin') return session.resources.storage.plugin_storage;
    if (id === 'workspace') return session.resources.storage.workspace_storage;
    return false;
  }
  return session.authorized[type].has(id);
}

/** Precomputes the authorized id sets from the resources (§4.5). */
export function authorizedIds(resources: Resources): RunSession['authorized'] {
  return {
    model: new Set(resources.models.map((m) => m.model_id)),
    tool: new Set(resources.tools.map((t) => t.tool_name)),
    knowledge_base: new Set(resources.knowledge_bases.map((k) => k.kb_id)),
    file: new Set(resources.files.map((f) => f.file_id)),
  };
}

/** The in-memory registry of live sessions, keyed by run_id. A run_id is never registered twice. */
export class SessionRegistry {
  readonly #sessions = new Map<string, RunSession>();
  readonly #ended = new Set<string>();

  register(session: RunSession): void {
    if (this.#sessions.has(session.run_id) || this.#ended.has(session.run_id)) throw new Error(`run ${session.run_id} is already registered`);
    this.#sessions.set(session.run_id, session);
  }

  /** Idempotent. */
  unregister(run_id: string): void {
    if (this.#sessions.delete(run_id)) this.#ended.add(run_id);
  }

  get(run_id: string): RunSession | undefined {
    return this.#sessions.get(run_id);
  }

  /** Live sessions of one plugin identity. */
  byPlugin(identity: string): RunSession[] {
    return [...this.#sessions.values()].filter((s) => s.plugin_identity === identity);
  }

  touch(run_id: string, nowS: number): void {
    const s = this.#sessions.get(run_id);
    if (s) s.last_activity_at = nowS;
  }

  listActive(): RunSession[] {
    return [...this.#sessions.values()];
  }

  /** Removes sessions idle longer than maxAgeS; returns how many. */
  cleanupStale(nowS: number, maxAgeS = 3600): number {
    let n = 0;
    for (const s of this.#sessions.values()) {
      if (nowS - s.last_activity_at > maxAgeS) {
        this.unregister(s.run_id);
        n++;
      }
    }
    return n;
  }
}
