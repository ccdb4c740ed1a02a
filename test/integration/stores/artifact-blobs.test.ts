// Content-addressed artifact bytes on disk: layout, dedup, atomic writes, missing blobs (AC-219).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { artifactRow } from '../../contract/artifact-store.case.js';
import { expectLbotErrorSync as expectLbotError } from '../../contract/harness.js';
import { openTempStores } from './temp-data-dir.js';

let s: SqliteStores;
afterEach(() => s.close());

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

describe('artifact blob files', () => {
  it('stores bytes at artifacts/sha256/<2 hex>/<62 hex>, once per content', () => {
    s = openTempStores();
    const sha = createHash('sha256').update('same bytes').digest('hex');
    s.artifacts.register(artifactRow({ artifact_id: 'a1', content: Buffer.from('same bytes') }));
    s.artifacts.register(artifactRow({ artifact_id: 'a2', content: Buffer.from('same bytes') }));
    const root = path.join(s.dataDir, 'artifacts');
    expect(filesUnder(root)).toEqual([path.join('sha256', sha.slice(0, 2), sha.slice(2))]);
    expect(readFileSync(path.join(root, 'sha256', sha.slice(0, 2), sha.slice(2)), 'utf8')).toBe('same bytes');
    expect(s.artifacts.get('a1')?.storage_key).toBe(`sha256:${sha}`);
  });

  it('AC-219: a hostile name never reaches the filesystem', () => {
    s = openTempStores();
    const r = s.artifacts.register(artifactRow({ name: '../../../../tmp/lbot-pwn.txt', content: Buffer.from('x') }));
    const all = filesUnder(s.dataDir).filter((f) => !f.startsWith('lbot.db'));
    expect(all).toHaveLength(1);
    expect(all[0]).toMatch(/^artifacts\/sha256\/[0-9a-f]{2}\/[0-9a-f]{62}$/);
    expect(r.name).toBe('../../../../tmp/lbot-pwn.txt');
  });

  it('a record whose bytes vanished reads as not_found', () => {
    s = openTempStores();
    const r = s.artifacts.register(artifactRow({ content: Buffer.from('gone soon') }));
    rmSync(path.join(s.dataDir, 'artifacts', 'sha256'), { recursive: true });
    expectLbotError(() => s.artifacts.read(r, 0, null), 'not_found');
  });

  it('a record carrying a non-hex digest never becomes a path', () => {
    s = openTempStores();
    const r = s.artifacts.register(artifactRow({ content: Buffer.from('abc') }));
    expectLbotError(() => s.artifacts.read({ ...r, sha256: '../../etc/passwd' }, 0, null), 'internal');
  });
});
