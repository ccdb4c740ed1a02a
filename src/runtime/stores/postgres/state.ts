// Persistent runner state on PostgreSQL (runner-protocol.md §8.4): JSON values keyed by (scope_key, state_key).
import { LbotError } from '../../../core/errors.js';
import { tryParseJson } from '../../../core/json.js';
import { StateScopeSchema, type StateScope } from '../../../core/protocol/binding.js';
import type { AsyncStateStore } from '../../../core/stores/async.js';
import { num, text, textOrNull } from '../../../core/stores/sqlite/columns.js';
import { NOT_JSON, parseValue } from '../../../core/stores/sqlite/state.js';
import { clampLimit } from '../../../core/stores/sqlite/text-limits.js';
import type { StateContextColumns, StateEntry } from '../../../core/stores/types.js';
import type { PgStoreDb } from './connection.js';

const UPSERT = `INSERT INTO agent_runner_state (
  runner_id, binding_identity, scope, scope_key, state_key, value_json, bot_id, workspace_id,
  conversation_id, thread_id, actor_type, actor_id, subject_type, subject_id, created_at, updated_at
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15)
ON CONFLICT (scope_key, state_key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at`;

/** StateStore backed by the `agent_runner_state` table. */
export class PgStateStore implements AsyncStateStore {
  constructor(readonly db: PgStoreDb) {}

  get(scope_key: string, key: string): Promise<{ found: boolean; value: unknown }> {
    return this.db.run('reading state', async (q) => {
      const row = await q.row('SELECT value_json FROM agent_runner_state WHERE scope_key = $1 AND state_key = $2', [scope_key, key]);
      if (!row) return { found: false, value: null };
      const value = parseValue(textOrNull(row, 'value_json'));
      return value === NOT_JSON ? { found: false, value: null } : { found: true, value };
    });
  }

  async set(scope: StateScope, scope_key: string, key: string, value_json: string, c: StateContextColumns): Promise<void> {
    if (tryParseJson(value_json) === undefined) {
      throw new LbotError('invalid_argument', `state value for key ${key} is not valid JSON text`, { details: { key, reason: 'not_json' } });
    }
    await this.db.run('writing state', (q) =>
      q.exec(UPSERT, [
        c.runner_id,
        c.binding_identity,
        scope,
        scope_key,
        key,
        value_json,
        c.bot_id,
        c.workspace_id,
        c.conversation_id,
        c.thread_id,
        c.actor_type,
        c.actor_id,
        c.subject_type,
        c.subject_id,
        this.db.now(),
      ]),
    );
  }

  delete(scope_key: string, key: string): Promise<boolean> {
    return this.db.run(
      'deleting state',
      async (q) => (await q.exec('DELETE FROM agent_runner_state WHERE scope_key = $1 AND state_key = $2', [scope_key, key])) > 0,
    );
  }

  list(scope_key: string, prefix: string | null, limit: number): Promise<{ keys: string[]; has_more: boolean }> {
    const n = clampLimit(limit);
    // starts_with is a literal prefix (no LIKE wildcards); `>= p` lets the index seek.
    const sql = prefix
      ? 'SELECT state_key FROM agent_runner_state WHERE scope_key = $1 AND state_key >= $2 AND starts_with(state_key, $2) ORDER BY state_key LIMIT $3'
      : 'SELECT state_key FROM agent_runner_state WHERE scope_key = $1 ORDER BY state_key LIMIT $2';
    const params = prefix ? [scope_key, prefix, n + 1] : [scope_key, n + 1];
    return this.db.run('listing state keys', async (q) => {
      const keys = (await q.rows(sql, params)).map((r) => text(r, 'state_key'));
      return { keys: keys.slice(0, n), has_more: keys.length > n };
    });
  }

  snapshot(scope_key: string): Promise<Record<string, unknown>> {
    return this.db.run('reading state', async (q) => {
      const out = Object.create(null) as Record<string, unknown>;
      for (const row of await q.rows('SELECT state_key, value_json FROM agent_runner_state WHERE scope_key = $1 ORDER BY state_key', [scope_key])) {
        const value = parseValue(textOrNull(row, 'value_json'));
        if (value !== NOT_JSON) out[text(row, 'state_key')] = value;
      }
      return out;
    });
  }

  entries(filter: { runner_id?: string; binding_id?: string; scope?: StateScope; limit?: number }): Promise<StateEntry[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (column: string, value: unknown) => {
      params.push(value);
      where.push(`${column} = $${params.length}`);
    };
    if (filter.runner_id !== undefined) add('runner_id', filter.runner_id);
    if (filter.binding_id !== undefined) add('binding_identity', filter.binding_id);
    if (filter.scope !== undefined) add('scope', filter.scope);
    let sql = `SELECT runner_id, binding_identity, scope, scope_key, state_key, value_json, updated_at FROM agent_runner_state
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY runner_id, binding_identity, scope_key, state_key`;
    if (filter.limit !== undefined) {
      params.push(Math.max(0, Math.trunc(filter.limit)));
      sql += ` LIMIT $${params.length}`;
    }
    return this.db.run('listing state', async (q) => {
      const out: StateEntry[] = [];
      for (const row of await q.rows(sql, params)) {
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
