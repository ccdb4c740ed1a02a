// State scope keys through the real SQLite store: escaped parts keep scopes apart, and migration 3
// rewrites the unescaped keys of older databases.
import path from 'node:path';
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { buildScopeKeys } from '../../../src/core/host/state-scope.js';
import { stateColumns } from '../../../src/core/host/event-record.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../../src/core/stores/sqlite/migrations.js';
import { openSqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { envelope, RUNNER_ID } from '../../unit/host/fixtures.js';
import { tempDir } from './temp-data-dir.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function freshDir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

describe('state scope keys on SQLite', () => {
  it('conversation "a" thread "b" and conversation "a:b" do not see each other\'s state', () => {
    const s = openSqliteStores(freshDir());
    try {
      const threaded = envelope({ conversation_id: 'a', thread_id: 'b' });
      const colon = envelope({ conversation_id: 'a:b', thread_id: null });
      const k1 = buildScopeKeys(RUNNER_ID, 'b1', threaded).conversation ?? '';
      const k2 = buildScopeKeys(RUNNER_ID, 'b1', colon).conversation ?? '';
      s.state.set('conversation', k1, 'memory.x', JSON.stringify('threaded'), stateColumns(threaded, RUNNER_ID, 'b1'));
      s.state.set('conversation', k2, 'memory.y', JSON.stringify('colon'), stateColumns(colon, RUNNER_ID, 'b1'));
      expect(s.state.snapshot(k1)).toEqual({ 'memory.x': 'threaded' });
      expect(s.state.snapshot(k2)).toEqual({ 'memory.y': 'colon' });
      expect(s.state.get(k2, 'memory.x')).toEqual({ found: false, value: null });
      expect(new Set(s.state.entries({}).map((e) => e.scope_key)).size).toBe(2);
    } finally {
      s.close();
    }
  });

  it('migration 3 rewrites old unescaped keys it can read back and keeps the others', () => {
    const dir = freshDir();
    const file = path.join(dir, 'lbot.db');
    // A database at schema version 2, as an older lbot left it.
    const db = new Database(file);
    for (const m of MIGRATIONS) if (m.version <= 2) db.exec(m.sql);
    db.pragma('user_version = 2');
    const insert =
      db.prepare(`INSERT INTO agent_runner_state (runner_id, binding_identity, scope, scope_key, state_key, value_json, conversation_id, thread_id, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 0)`);
    // Written by a run: the identity columns rebuild the old key exactly.
    insert.run(RUNNER_ID, 'b1', 'conversation', `conversation:${RUNNER_ID}:b1:onebot:group:1`, 'k', '"group"', 'onebot:group:1', null);
    // Written by `lbot state set` (no identity columns): one reading only.
    insert.run(RUNNER_ID, 'b1', 'runner', `runner:${RUNNER_ID}:b1`, 'k', '"runner"', null, null);
    // No identity and several readings: left as it was.
    insert.run(RUNNER_ID, 'b1', 'conversation', `conversation:${RUNNER_ID}:b1:x:y`, 'k', '"ambiguous"', null, null);
    db.close();

    const s = openSqliteStores(dir);
    try {
      const group = buildScopeKeys(RUNNER_ID, 'b1', envelope({ conversation_id: 'onebot:group:1', thread_id: null }));
      expect(group.conversation).toBe('conversation:plugin%3Aacme/scripted/default:b1:onebot%3Agroup%3A1');
      expect(s.state.snapshot(group.conversation ?? '')).toEqual({ k: 'group' });
      expect(s.state.snapshot(group.runner ?? '')).toEqual({ k: 'runner' });
      expect(s.state.snapshot(`conversation:${RUNNER_ID}:b1:x:y`)).toEqual({ k: 'ambiguous' });
    } finally {
      s.close();
    }
    const after = new Database(file, { readonly: true });
    try {
      expect(after.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    } finally {
      after.close();
    }
  });
});
