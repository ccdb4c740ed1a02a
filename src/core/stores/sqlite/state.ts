// Persistent runner state on SQLite (runner-protocol.md §8.4): JSON values keyed by (scope_key, state_key).
import { LbotError } from '../../errors.js';
import { tryParseJson } from '../../json.js';
import { StateScopeSchema, type StateScope } from '../../protocol/binding.js';
import type { StateContextColumns, StateEntry, StateStore } from '../types.js';
import { num, rowOrNull, rowsOf, text, textOrNull } from './columns.js';
import type { StoreDb } from './connection.js';
import { clampLimit } from './text-limits.js';

const UPSERT = `INSERT INTO agent_runner_state (
  runner_id, binding_identity, scope, scope_key, state_key, value_json, bot_id, workspace_id,
  conversation_id, thread_id, actor_type, actor_id, subject_type, subject_id, created_at, updated_at
) VALUES (
  @runner_id, @binding_identity, @scope, @scope_key, @state_key, @value_json, @bot_id, @workspace_id,
  @conversation_id, @thread_id, @actor_type, @actor_id, @subject_type, @subject_id, @now, @now
) ON CONFLICT (scope_key, state_key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at`;

export const NOT_JSON = Symbol('not json');

export function parseValue(raw: string | null): unknown {
  if (raw === null) return null;
  const v = tryParseJson(raw);
  return v === undefined ? NOT_JSON : v;
}

/** StateStore backed by the `agent_runner_state` table. */
export class SqliteStateStore implements StateStore {
  constructor(readonly store: StoreDb) {}

  get(scope_key: string, key: string): { found: boolean; value: unknown } {
    return this.store.run('reading state', () => {
      const row = rowOrNull(this.store.prepare('SELECT value_json FROM agent_runner_state WHERE scope_key = ? AND state_key = ?').get(scope_key, key));
      if (!row) return { found: false, value: null };
      const value = parseValue(textOrNull(row, 'value_json'));
      return value === NOT_JSON ? { found: false, value: null } : { found: true, value };
    });
  }

  set(scope: StateScope, scope_key: string, key: string, value_json: string, columns: StateContextColumns): void {
    if (tryParseJson(value_json) === undefined) {
      throw new LbotError('invalid_argument', `state value for key ${key} is not valid JSON text`, { details: { key, reason: 'not_json' } });
    }
    this.store.run('writing state', () => {
      this.store.prepare(UPSERT).run({ ...columns, scope, scope_key, state_key: key, value_json, now: this.store.now() });
    });
  }

  delete(scope_key: string, key: string): boolean {
    return this.store.run(
      'deleting state',
      () => this.store.prepare('DELETE FROM agent_runner_state WHERE scope_key = ? AND state_key = ?').run(scope_key, key).changes > 0,
    );
  }

  list(scope_key: string, prefix: string | null, limit: number): { keys: string[]; has_more: boolean } {
    const n = clampLimit(limit);
    // instr(k, p) = 1 exactly when k starts with p: a literal prefix, no LIKE wildcards; `>= p` lets the index seek.
    const sql = prefix
      ? 'SELECT state_key FROM agent_runner_state WHERE scope_key = ? AND state_key >= ? AND instr(state_key, ?) = 1 ORDER BY state_key LIMIT ?'
      : 'SELECT state_key FROM agent_runner_state WHERE scope_key = ? ORDER BY state_key LIMIT ?';
    const params = prefix ? [scope_key, prefix, prefix, n + 1] : [scope_key, n + 1];
    return this.store.run('listing state keys', () => {
      const keys = rowsOf(this.store.prepare(sql).all(...params)).map((r) => text(r, 'state_key'));
      return { keys: keys.slice(0, n), has_more: keys.length > n };
    });
  }

  snapshot(scope_key: string): Record<string, unknown> {
    return this.store.run('reading state', () => {
      const out = Object.create(null) as Record<string, unknown>;
      for (const row of rowsOf(
        this.store.prepare('SELECT state_key, value_json FROM agent_runner_state WHERE scope_key = ? ORDER BY state_key').all(scope_key),
      )) {
        const value = parseValue(textOrNull(row, 'value_json'));
        if (value !== NOT_JSON) out[text(row, 'state_key')] = value;
      }
      return out;
    });
  }

  entries(filter: { runner_id?: string; binding_id?: string; scope?: StateScope; limit?: number }): StateEntry[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.runner_id !== undefined) {
      where.push('runner_id = ?');
      params.push(filter.runner_id);
    }
    if (filter.binding_id !== undefined) {
      where.push('binding_identity = ?');
      params.push(filter.binding_id);
    }
    if (filter.scope !== undefined) {
      where.push('scope = ?');
      params.push(filter.scope);
    }
    let sql = `SELECT runner_id, binding_identity, scope, scope_key, state_key, value_json, updated_at FROM agent_runner_state
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY runner_id, binding_identity, scope_key, state_key`;
    if (filter.limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(Math.max(0, Math.trunc(filter.limit)));
    }
    return this.store.run('listing state', () => {
      const out: StateEntry[] = [];
      for (const row of rowsOf(this.store.prepare(sql).all(...params))) {
        const value = parseValue(textOrNull(row, 'value_json'));
        const scope = StateScopeSchema.safeParse(text(row, 'scope'));
        if (value === NOT_JSON || !scope.success) continue;
        out.push({
          runner_id: text(row, 'runner_id'),
          binding_id: text(row, 'binding_identity'),
          scope: scope.data,
          scope_key: text(row, 'scope_key'),
          key: text(row, 'state_key'),
          value,
          updated_at: num(row, 'updated_at'),
        });
      }
      return out;
    });
  }
}
