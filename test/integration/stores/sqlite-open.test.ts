// Opening the SQLite stores: data dir checks (AC-201), pragmas, schema versioning, reopening (AC-060).
import { chmodSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SCHEMA_VERSION } from '../../../src/core/stores/sqlite/migrations.js';
import { openSqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { LbotError } from '../../../src/core/errors.js';
import { expectLbotErrorSync as expectLbotError } from '../../contract/harness.js';
import { finished, killAll, spawnChild } from './child-process.js';
import { eventRow } from '../../contract/event-log.case.js';
import { stateColumns } from '../../contract/state-store.case.js';
import { transcriptRow } from '../../contract/transcript.case.js';
import { tempDir } from './temp-data-dir.js';
import { withReason } from '../../helpers/skip.js';

const dirs: string[] = [];
function freshDir(): string {
  const d = tempDir();
  chmodSync(d, 0o755);
  dirs.push(d);
  return d;
}
afterEach(() => {
  killAll();
  for (const d of dirs.splice(0)) {
    chmodSync(d, 0o700);
    rmSync(d, { recursive: true, force: true });
  }
});

const isRoot = process.getuid?.() === 0;

/** An existing directory this process cannot write, or null: root ignores mode bits, so /sys stands in. */
function unwritableDir(): string | null {
  if (!isRoot) {
    const d = freshDir();
    chmodSync(d, 0o555);
    return d;
  }
  try {
    writeFileSync('/sys/.lbot-probe', '');
    return null;
  } catch {
    return statSync('/sys', { throwIfNoEntry: false })?.isDirectory() ? '/sys' : null;
  }
}

describe('openSqliteStores', () => {
  it('creates a missing data dir with lbot.db and artifacts/sha256, in WAL mode at the current schema', () => {
    const dir = path.join(freshDir(), 'nested', 'data');
    const s = openSqliteStores(dir);
    s.close();
    expect(existsSync(path.join(dir, 'lbot.db'))).toBe(true);
    expect(statSync(path.join(dir, 'artifacts', 'sha256')).isDirectory()).toBe(true);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readdirSync(dir).filter((f) => f.startsWith('.lbot-write-probe'))).toEqual([]);
    const db = new Database(path.join(dir, 'lbot.db'), { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').all()).toEqual(
        Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 })),
      );
    } finally {
      db.close();
    }
  });

  it('AC-060: a second open sees everything the first wrote, without migrating again', () => {
    const dir = freshDir();
    const a = openSqliteStores(dir);
    a.events.append(eventRow());
    a.transcript.append(transcriptRow({ content: 'persisted words' }));
    a.state.set('conversation', 'k', 'a', '{"n":1}', stateColumns());
    a.close();
    a.close();
    const b = openSqliteStores(dir);
    try {
      expect(b.events.findByEventId('evt-1')).toHaveLength(1);
      expect(b.transcript.search({ conversation_id: 'c1', query: 'SISTED wor', top_k: 5 }).map((i) => i.content)).toEqual(['persisted words']);
      expect(b.state.get('k', 'a')).toEqual({ found: true, value: { n: 1 } });
      expect(b.state.entries({})).toHaveLength(1);
    } finally {
      b.close();
    }
    const db = new Database(path.join(dir, 'lbot.db'), { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM schema_migrations').get()).toEqual({ n: SCHEMA_VERSION });
    db.close();
  });

  it('AC-201: a data dir that is a file is store.unavailable naming the path', () => {
    const file = path.join(freshDir(), 'not-a-dir');
    writeFileSync(file, 'x');
    const err = expectLbotError(() => openSqliteStores(file), 'store.unavailable');
    expect(err.message).toContain(file);
    expect(err.details['path']).toBe(file);
    expect(err.hint).toMatch(/--data-dir/);
  });

  it('AC-201: a data dir under a file is store.unavailable', () => {
    const file = path.join(freshDir(), 'file');
    writeFileSync(file, 'x');
    const err = expectLbotError(() => openSqliteStores(path.join(file, 'sub')), 'store.unavailable');
    expect(err.message).toContain(path.join(file, 'sub'));
  });

  const ro = unwritableDir();
  if (ro === null) console.warn('skipping the read-only data dir test: running as root and no read-only directory (/sys) is available');
  it.skipIf(ro === null)(
    withReason('AC-201: a read-only data dir fails at open, naming the path', ro === null && 'running as root and no read-only directory (/sys) is available'),
    () => {
      const dir = ro ?? '';
      const err = expectLbotError(() => openSqliteStores(dir), 'store.unavailable');
      expect(err.message.startsWith(`${dir}: `)).toBe(true);
      expect(err.message).toMatch(/not writable/);
    },
  );

  it('AC-201: a read-only lbot.db fails at open, not at the first write', async () => {
    const dir = freshDir();
    openSqliteStores(dir).close();
    chmodSync(dir, 0o777);
    chmodSync(path.join(dir, 'artifacts', 'sha256'), 0o777);
    chmodSync(path.join(dir, 'lbot.db'), 0o444);
    let outcome: { ok: boolean; code?: string; message?: string };
    if (isRoot) {
      // root writes through mode bits, so the open runs as `nobody` in a child process.
      const r = await finished(spawnChild('open-stores.ts', [dir], { uid: 65534, gid: 65534 }));
      expect(r.stderr).toBe('');
      outcome = z.object({ ok: z.boolean(), code: z.string().optional(), message: z.string().optional() }).parse(JSON.parse(r.stdout));
    } else {
      try {
        openSqliteStores(dir).close();
        outcome = { ok: true };
      } catch (err) {
        outcome = { ok: false, code: err instanceof LbotError ? err.code : 'not an LbotError', message: String(err) };
      }
    }
    expect(outcome.ok).toBe(false);
    expect(outcome.code).toBe('store.unavailable');
    expect(outcome.message).toContain(path.join(dir, 'lbot.db'));
    expect(outcome.message).toMatch(/readonly/);
  });

  it('a lbot.db that is not a database is store.unavailable naming the file', () => {
    const dir = freshDir();
    writeFileSync(path.join(dir, 'lbot.db'), 'this is not a database, just text padded out '.repeat(200));
    const err = expectLbotError(() => openSqliteStores(dir), 'store.unavailable');
    expect(err.message).toContain(path.join(dir, 'lbot.db'));
  });

  it('a database from a newer lbot is refused instead of being modified', () => {
    const dir = freshDir();
    openSqliteStores(dir).close();
    const db = new Database(path.join(dir, 'lbot.db'));
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    const err = expectLbotError(() => openSqliteStores(dir), 'store.unavailable');
    expect(err.message).toMatch(/newer/);
  });

  it('turns on foreign keys for the connection (a run audit cannot point at a missing run)', () => {
    const s = openSqliteStores(freshDir());
    try {
      expectLbotError(
        () => s.runs.addResult('ghost', { type: 'message.completed', run_id: 'ghost', data: { message: { role: 'assistant', content: 'x' } } }),
        'not_found',
      );
    } finally {
      s.close();
    }
  });
});
