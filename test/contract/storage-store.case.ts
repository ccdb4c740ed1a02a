// Contract suite for StorageStore (runner-protocol.md §7.9): every implementation runs it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StorageStore } from '../../src/core/stores/types.js';
import type { OpenStore } from './harness.js';

export function storageStoreContract(name: string, open: OpenStore<{ storage: StorageStore }>): void {
  describe(`StorageStore contract (${name})`, () => {
    let s: ReturnType<typeof open>;
    beforeEach(() => {
      s = open();
    });
    afterEach(() => s.close());

    it('round-trips binary values exactly, including empty ones', () => {
      const bytes = Buffer.from([0, 255, 1, 0, 128, 10, 13]);
      s.storage.set('plugin', 'acme/echo', 'bin', bytes);
      s.storage.set('plugin', 'acme/echo', 'empty', Buffer.alloc(0));
      expect(s.storage.get('plugin', 'acme/echo', 'bin')?.equals(bytes)).toBe(true);
      expect(s.storage.get('plugin', 'acme/echo', 'empty')?.length).toBe(0);
      expect(s.storage.get('plugin', 'acme/echo', 'missing')).toBeNull();
    });

    it('upserts, deletes, and keeps owners apart', () => {
      s.storage.set('plugin', 'p1', 'k', Buffer.from('one'));
      s.storage.set('plugin', 'p1', 'k', Buffer.from('two'));
      s.storage.set('plugin', 'p2', 'k', Buffer.from('other'));
      s.storage.set('workspace', 'default', 'k', Buffer.from('ws'));
      expect(s.storage.get('plugin', 'p1', 'k')?.toString()).toBe('two');
      expect(s.storage.get('plugin', 'p2', 'k')?.toString()).toBe('other');
      expect(s.storage.get('workspace', 'default', 'k')?.toString()).toBe('ws');
      expect(s.storage.delete('plugin', 'p1', 'k')).toBe(true);
      expect(s.storage.delete('plugin', 'p1', 'k')).toBe(false);
      expect(s.storage.get('plugin', 'p1', 'k')).toBeNull();
      expect(s.storage.get('plugin', 'p2', 'k')?.toString()).toBe('other');
    });

    it('lists keys sorted, with an optional literal prefix', () => {
      for (const k of ['b', 'a/2', 'a/1', 'a%x', 'c']) s.storage.set('plugin', 'p', k, Buffer.from(k));
      s.storage.set('plugin', 'q', 'a/9', Buffer.from('x'));
      expect(s.storage.list('plugin', 'p', null)).toEqual(['a%x', 'a/1', 'a/2', 'b', 'c']);
      expect(s.storage.list('plugin', 'p', 'a/')).toEqual(['a/1', 'a/2']);
      expect(s.storage.list('plugin', 'p', 'a%')).toEqual(['a%x']);
      expect(s.storage.list('plugin', 'nobody', null)).toEqual([]);
    });
  });
}
