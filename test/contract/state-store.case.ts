// Contract suite for StateStore (runner-protocol.md §8.4; AC-047, AC-050): every implementation runs it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StateContextColumns, StateStore } from '../../src/core/stores/types.js';
import type { Async } from '../../src/core/stores/async.js';
import { expectLbotError, type OpenStore } from './harness.js';

export function stateColumns(over: Partial<StateContextColumns> = {}): StateContextColumns {
  return {
    runner_id: 'plugin:acme/echo/default',
    binding_identity: 'b1',
    bot_id: null,
    workspace_id: null,
    conversation_id: 'c1',
    thread_id: null,
    actor_type: 'user',
    actor_id: 'u1',
    subject_type: null,
    subject_id: null,
    ...over,
  };
}

const KEY = 'conversation:plugin:acme/echo/default:b1:c1';

export function stateStoreContract(name: string, open: OpenStore<{ state: Async<StateStore> }>): void {
  describe(`StateStore contract (${name})`, () => {
    let s: Awaited<ReturnType<typeof open>>;
    beforeEach(async () => {
      s = await open();
    });
    afterEach(() => s.close());

    const set = (key: string, value: unknown, scope_key = KEY) => s.state.set('conversation', scope_key, key, JSON.stringify(value), stateColumns());

    it('AC-047: set, get, list, delete twice; a missing key is not found', async () => {
      await set('a', { n: 1 });
      expect(await s.state.get(KEY, 'a')).toEqual({ found: true, value: { n: 1 } });
      expect(await s.state.list(KEY, 'a', 100)).toEqual({ keys: ['a'], has_more: false });
      expect(await s.state.delete(KEY, 'a')).toBe(true);
      expect(await s.state.delete(KEY, 'a')).toBe(false);
      expect(await s.state.get(KEY, 'a')).toEqual({ found: false, value: null });
    });

    it('upserts: the last write wins, one row per (scope_key, key)', async () => {
      await set('a', 1);
      await set('a', [2, 'two']);
      await set('n', null);
      expect((await s.state.get(KEY, 'a')).value).toEqual([2, 'two']);
      expect(await s.state.get(KEY, 'n')).toEqual({ found: true, value: null });
      expect(await s.state.entries({})).toHaveLength(2);
    });

    it('AC-047: list caps at 100 ascending with has_more; a prefix is literal', async () => {
      for (let i = 149; i >= 0; i--) await set(`k${String(i).padStart(3, '0')}`, i);
      const all = await s.state.list(KEY, null, 1000);
      expect(all.keys).toHaveLength(100);
      expect(all.has_more).toBe(true);
      expect(all.keys[0]).toBe('k000');
      expect(all.keys).toEqual([...all.keys].sort());
      const k14 = await s.state.list(KEY, 'k14', 100);
      expect(k14).toEqual({ keys: Array.from({ length: 10 }, (_, i) => `k14${i}`), has_more: false });
      expect(await s.state.list(KEY, 'k14', 3)).toEqual({ keys: ['k140', 'k141', 'k142'], has_more: true });
      await set('a%b', 1);
      await set('a_b', 1);
      await set('axb', 1);
      expect((await s.state.list(KEY, 'a%', 100)).keys).toEqual(['a%b']);
      expect((await s.state.list(KEY, 'a_', 100)).keys).toEqual(['a_b']);
      expect(await s.state.list(KEY, 'zzz', 100)).toEqual({ keys: [], has_more: false });
      expect((await s.state.list(KEY, null, 0)).keys).toHaveLength(1);
    });

    it('AC-050: scope keys isolate values; entries name runner, binding, scope and key', async () => {
      const k1 = 'conversation:r1:b1:c1';
      const k2 = 'conversation:r1:b2:c1';
      const k3 = 'conversation:r2:b1:c1';
      await s.state.set('conversation', k1, 'k', '"one"', stateColumns({ runner_id: 'r1', binding_identity: 'b1' }));
      await s.state.set('conversation', k2, 'k', '"two"', stateColumns({ runner_id: 'r1', binding_identity: 'b2' }));
      await s.state.set('conversation', k3, 'k', '"three"', stateColumns({ runner_id: 'r2', binding_identity: 'b1' }));
      await s.state.set('actor', 'actor:r1:b1:user:u1', 'lang', '"fr"', stateColumns({ runner_id: 'r1', binding_identity: 'b1' }));
      expect((await Promise.all([k1, k2, k3].map((k) => s.state.get(k, 'k')))).map((r) => r.value)).toEqual(['one', 'two', 'three']);
      const conv = await s.state.entries({ scope: 'conversation' });
      expect(conv).toHaveLength(3);
      expect(new Set(conv.map((e) => e.scope_key)).size).toBe(3);
      expect(await s.state.entries({ runner_id: 'r1' })).toHaveLength(3);
      expect(await s.state.entries({ runner_id: 'r1', binding_id: 'b2' })).toEqual([
        { runner_id: 'r1', binding_id: 'b2', scope: 'conversation', scope_key: k2, key: 'k', value: 'two', updated_at: expect.any(Number) },
      ]);
      expect(await s.state.entries({ limit: 2 })).toHaveLength(2);
    });

    it('snapshots one scope key as a plain object', async () => {
      await set('external.conversation_id', 'x-1');
      await set('memory.n', 3);
      await set('other', true, 'conversation:r:b:c2');
      expect({ ...(await s.state.snapshot(KEY)) }).toEqual({ 'external.conversation_id': 'x-1', 'memory.n': 3 });
      expect({ ...(await s.state.snapshot('none')) }).toEqual({});
    });

    it('AC-052: stores a value of exactly 262,144 bytes of JSON', async () => {
      const json = JSON.stringify('é'.repeat(131_071));
      expect(Buffer.byteLength(json)).toBe(262_144);
      await s.state.set('conversation', KEY, 'big', json, stateColumns());
      expect((await s.state.get(KEY, 'big')).value).toBe('é'.repeat(131_071));
    });

    it('refuses a value that is not JSON text', async () => {
      await expectLbotError(() => s.state.set('conversation', KEY, 'a', '{not json', stateColumns()), 'invalid_argument');
      expect((await s.state.get(KEY, 'a')).found).toBe(false);
    });
  });
}
