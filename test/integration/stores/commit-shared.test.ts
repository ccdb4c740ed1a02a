// serve answers a request only once its writes are durable; the answers of one turn of the event loop share
// one commit (HostStores.commitShared).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { openHostStores, type HostStores } from '../../../src/runtime/stores/open.js';
import { stateColumns } from '../../contract/state-store.case.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function open(): Promise<{ host: HostStores; keys: () => string[] }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-commit-shared-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  // The reader first: the host's group holds the write lock from its first write on.
  const reader = openSqliteStores(dir);
  cleanup.push(() => reader.close());
  // A window no test waits out: only commit() and commitShared() make the writes visible.
  const host = await openHostStores(dir, null, { commitWindowMs: 60_000 });
  cleanup.push(() => host.close());
  return { host, keys: () => Object.keys(reader.state.snapshot('conversation:c1')).sort() };
}

const set = (host: HostStores, key: string) => host.state.set('conversation', 'conversation:c1', key, JSON.stringify({ key }), stateColumns());

describe('commitShared', () => {
  it('resolves once the writes made before it are committed', async () => {
    const { host, keys } = await open();
    await set(host, 'a');
    expect(keys()).toEqual([]);
    await host.commitShared();
    expect(keys()).toEqual(['a']);
  });

  it('gives the callers of one turn one commit, and a later caller a commit of its own', async () => {
    const { host, keys } = await open();
    await set(host, 'a');
    const first = host.commitShared();
    await set(host, 'b');
    const second = host.commitShared();
    expect(second).toBe(first);
    await first;
    expect(keys()).toEqual(['a', 'b']);
    await set(host, 'c');
    const third = host.commitShared();
    expect(third).not.toBe(first);
    expect(keys()).toEqual(['a', 'b']);
    await third;
    expect(keys()).toEqual(['a', 'b', 'c']);
  });
});
