// Contract suite for StorageStore (runner-protocol.md §7.9): every implementation runs it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StorageStore } from '../../src/core/stores/types.js';
import type { Async } from '../../src/core/stores/async.js';
import type { OpenStore } from './harness.js';

export function storageStoreContract(name: string, open: OpenStore<{ storage: Async<StorageStore> }>): void {
  describe(`StorageStore contract (${name})`, () => {
    let s: Awaited<ReturnType<typeof open>>;
    beforeEach(async () => {
      s = await open();
    });
    afterEach(() => s.close());

    it('round-trips binary values exactly, including empty ones', async () => {
      const bytes = Buffer.from([0, 255, 1, 0, 128, 10, 13]);
      await s.storage.set('plugin', 'acme/echo', 'bin', bytes);
      await s.storage.set('plugin', 'acme/echo', 'empty', Buffer.alloc(0));
      expect((await s.storage.get('plugin', 'acme/echo', 'bin'))?.equals(bytes)).toBe(true);
      expect((await s.storage.get('plugin', 'acme/echo', 'empty'))?.length).toBe(0);
      expect(await s.storage.get('plugin', 'acme/echo', 'missing')).toBeNull();
    });

    it('upserts, deletes, and keeps owners apart', async () => {
      await s.storage.set('plugin', 'p1', 'k', Buffer.from('one'));
      await s.storage.set('plugin', 'p1', 'k', Buffer.from('two'));
      await s.storage.set('plugin', 'p2', 'k', Buffer.from('other'));
      await s.storage.set('workspace', 'default', 'k', Buffer.from('ws'));
      expect((await s.storage.get('plugin', 'p1', 'k'))?.toString()).toBe('two');
      expect((await s.storage.get('plugin', 'p2', 'k'))?.toString()).toBe('other');
      expect((await s.storage.get('workspace', 'default', 'k'))?.toString()).toBe('ws');
      expect(await s.storage.delete('plugin', 'p1', 'k')).toBe(true);
      expect(await s.storage.delete('plugin', 'p1', 'k')).toBe(false);
      expect(await s.storage.get('plugin', 'p1', 'k')).toBeNull();
      expect((await s.storage.get('plugin', 'p2', 'k'))?.toString()).toBe('other');
    });

    it('lists keys sorted, with an optional literal prefix', async () => {
      for (const k of ['b', 'a/2', 'a/1', 'a%x', 'c']) await s.storage.set('plugin', 'p', k, Buffer.from(k));
      await s.storage.set('plugin', 'q', 'a/9', Buffer.from('x'));
      expect(await s.storage.list('plugin', 'p', null)).toEqual(['a%x', 'a/1', 'a/2', 'b', 'c']);
      expect(await s.storage.list('plugin', 'p', 'a/')).toEqual(['a/1', 'a/2']);
      expect(await s.storage.list('plugin', 'p', 'a%')).toEqual(['a%x']);
      expect(await s.storage.list('plugin', 'nobody', null)).toEqual([]);
    });
  });
}
