// Acknowledged writes survive kill -9 of the writing process; the database opens without repair.
import { rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { finished, killAll, spawnChild } from './child-process.js';
import { tempDir } from './temp-data-dir.js';

let dir = '';
afterEach(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe('durability', () => {
  it('every key printed before kill -9 is present, and integrity_check is ok', async () => {
    dir = tempDir();
    const child = spawnChild('state-writer.ts', [dir]);
    const done = finished(child);
    let seen = 0;
    await new Promise<void>((resolve, reject) => {
      child.once('exit', () => reject(new Error('the writer exited before it was killed')));
      child.stdout?.on('data', (chunk: Buffer | string) => {
        seen += String(chunk)
          .split('\n')
          .filter((l) => l.startsWith('k')).length;
        if (seen >= 300) {
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    const result = await done;
    expect(result.signal).toBe('SIGKILL');
    const acknowledged = result.stdout.split('\n').filter((l) => l.startsWith('k'));
    expect(acknowledged.length).toBeGreaterThanOrEqual(300);

    const raw = new Database(path.join(dir, 'lbot.db'));
    try {
      expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      raw.close();
    }
    const stores = openSqliteStores(dir);
    try {
      const present = new Set(Object.keys(stores.state.snapshot('conversation:durability')));
      const missing = acknowledged.filter((k) => !present.has(k));
      expect(missing).toEqual([]);
      const last = acknowledged.at(-1) ?? '';
      expect(stores.transcript.search({ conversation_id: 'c1', query: `item ${last}`, top_k: 1 }).map((i) => i.content)).toEqual([`durable item ${last}`]);
    } finally {
      stores.close();
    }
  });
});
