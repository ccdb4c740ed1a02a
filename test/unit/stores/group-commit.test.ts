// The commit window of the SQLite stores (serve): writes join one transaction that another connection sees
// only once it commits (at the window's end, on commit(), on close); a failed group commit breaks the store.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import { openSqliteStores, type SqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { stateColumns } from '../../contract/state-store.case.js';
import { transcriptRow } from '../../contract/transcript.case.js';

const dirs: string[] = [];
const open: SqliteStores[] = [];
afterEach(() => {
  for (const s of open.splice(0)) {
    try {
      s.close();
    } catch {
      // a broken store refuses its last commit
    }
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function pair(commitWindowMs: number): { writer: SqliteStores; reader: SqliteStores } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-group-'));
  dirs.push(dir);
  const writer = openSqliteStores(dir, { commitWindowMs });
  const reader = openSqliteStores(dir);
  open.push(writer, reader);
  return { writer, reader };
}

const set = (s: SqliteStores, key: string) => s.state.set('conversation', 'conversation:c1', key, JSON.stringify({ key }), stateColumns());
const keys = (s: SqliteStores) => Object.keys(s.state.snapshot('conversation:c1')).sort();

describe('group commit', () => {
  it('holds writes back from other connections until commit(), while the writer reads its own', () => {
    const { writer, reader } = pair(60_000);
    set(writer, 'a');
    set(writer, 'b');
    expect(keys(writer)).toEqual(['a', 'b']);
    expect(keys(reader)).toEqual([]);
    writer.commit();
    expect(keys(reader)).toEqual(['a', 'b']);
    writer.commit(); // nothing pending: a no-op
    set(writer, 'c');
    writer.close();
    expect(keys(reader)).toEqual(['a', 'b', 'c']);
  });

  it('commits on its own when the window ends', async () => {
    const { writer, reader } = pair(5);
    set(writer, 'a');
    expect(keys(reader)).toEqual([]);
    await expect.poll(() => keys(reader), { timeout: 2000, interval: 5 }).toEqual(['a']);
  });

  it('keeps a failed write inside the group from undoing the others', () => {
    const { writer, reader } = pair(60_000);
    set(writer, 'a');
    expect(() =>
      writer.transaction?.(() => {
        set(writer, 'b');
        throw new Error('refused halfway');
      }),
    ).toThrow('refused halfway');
    writer.commit();
    expect(keys(reader)).toEqual(['a']);
  });

  it('a transcript append in a group is found by search once committed', () => {
    const { writer, reader } = pair(60_000);
    const item = writer.transcript.append(transcriptRow({ conversation_id: 'c9', content: 'the quarterly report is late' }));
    writer.commit();
    expect(reader.transcript.search({ conversation_id: 'c9', query: 'quarterly', top_k: 5 }).map((i) => i.seq)).toEqual([item.seq]);
  });

  it('a transcript append whose search entry fails leaves no row behind, and the group keeps its other writes', () => {
    const { writer, reader } = pair(60_000);
    set(writer, 'a');
    // The search index gone: the row is inserted, then its index entry fails.
    writer.transcript.store.db.exec('DROP TABLE transcript_fts');
    expect(() => writer.transcript.append(transcriptRow({ conversation_id: 'c9', content: 'lost' }))).toThrow('no such table: transcript_fts');
    writer.commit();
    expect(reader.transcript.page({ conversation_id: 'c9', direction: 'backward', limit: 10, include_artifacts: false }).items).toEqual([]);
    expect(keys(reader)).toEqual(['a']);
  });

  it('two hosts in one process: a connection taking the write lock commits the other open group first', () => {
    const { writer, reader } = pair(60_000);
    // A second host on the same data dir in this process (two dev sessions): better-sqlite3 waits for the
    // lock synchronously, so without this the first group's commit timer never ran and the write failed
    // with store.locked after the busy timeout.
    const second = openSqliteStores(writer.dataDir, { commitWindowMs: 60_000 });
    open.push(second);
    set(writer, 'a');
    set(second, 'b');
    expect(keys(reader)).toEqual(['a']);
    set(writer, 'c');
    expect(keys(reader)).toEqual(['a', 'b']);
    second.commit();
    writer.commit();
    expect(keys(reader)).toEqual(['a', 'b', 'c']);
  });

  it('without a window every write is committed when it returns', () => {
    const { writer, reader } = pair(0);
    set(writer, 'a');
    expect(keys(reader)).toEqual(['a']);
  });

  it('a failed group commit loses the group and then refuses all work with store.unavailable', () => {
    const { writer, reader } = pair(60_000);
    set(writer, 'a');
    // A foreign key checked at COMMIT makes the commit itself fail.
    const db = writer.transcript.store.db;
    db.pragma('defer_foreign_keys = ON');
    db.prepare("INSERT INTO run_items (run_id, kind, body_json) VALUES ('no-such-run', 'warning', '{}')").run();
    let thrown: unknown;
    try {
      writer.commit();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(LbotError);
    expect(thrown).toMatchObject({ code: 'store.unavailable' });
    expect(keys(reader)).toEqual([]);
    expect(() => set(writer, 'b')).toThrow(/writes already answered were lost/);
    expect(() => writer.commit()).toThrow(/writes already answered were lost/);
  });
});
