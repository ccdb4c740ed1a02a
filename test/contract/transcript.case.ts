// Contract suite for Transcript (runner-protocol.md §8.2; AC-043..AC-046): every implementation runs it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Transcript, TranscriptAppend } from '../../src/core/stores/types.js';
import type { Async } from '../../src/core/stores/async.js';
import type { OpenStore } from './harness.js';

export function transcriptRow(over: Partial<TranscriptAppend> = {}): TranscriptAppend {
  return {
    event_id: 'evt-1',
    conversation_id: 'c1',
    thread_id: null,
    role: 'user',
    item_type: 'message',
    content: 'hello',
    content_json: { role: 'user', content: 'hello' },
    artifact_refs: [{ artifact_id: 'a1' }],
    run_id: null,
    runner_id: null,
    metadata: {},
    ...over,
  };
}

export function transcriptContract(name: string, open: OpenStore<{ transcript: Async<Transcript> }>): void {
  describe(`Transcript contract (${name})`, () => {
    let s: Awaited<ReturnType<typeof open>>;
    beforeEach(async () => {
      s = await open();
    });
    afterEach(() => s.close());

    const fill = async (n: number, conversation_id = 'c1') => {
      const out = [];
      for (let i = 1; i <= n; i++) out.push(await s.transcript.append(transcriptRow({ conversation_id, content: `item ${i}` })));
      return out;
    };

    it('AC-043: strictly increasing seq, cursor = String(seq), unique transcript ids, metadata kept', async () => {
      const roles = ['user', 'assistant', 'user', 'assistant'];
      const items = [];
      for (const role of roles) {
        items.push(
          await s.transcript.append(
            transcriptRow({ role, run_id: role === 'assistant' ? 'run-1' : null, metadata: role === 'assistant' ? { run_id: 'run-1', runner_id: 'r' } : {} }),
          ),
        );
      }
      for (let i = 1; i < items.length; i++) expect(items[i]?.seq ?? 0).toBeGreaterThan(items[i - 1]?.seq ?? 0);
      for (const it of items) expect(it.cursor).toBe(String(it.seq));
      expect(new Set(items.map((i) => i.transcript_id)).size).toBe(4);
      const page = await s.transcript.page({ conversation_id: 'c1', limit: 10, direction: 'backward', include_artifacts: false });
      expect(page.items.map((i) => i.role).reverse()).toEqual(roles);
      expect(page.items[0]?.metadata).toEqual({ run_id: 'run-1', runner_id: 'r' });
      expect(typeof page.items[0]?.created_at).toBe('number');
    });

    it('returns from append the item a read gives back', async () => {
      const long = 'w'.repeat(4100);
      const item = await s.transcript.append(transcriptRow({ content: long, thread_id: 't1', metadata: { actor_id: 'u1' } }));
      const page = await s.transcript.page({ conversation_id: 'c1', limit: 10, direction: 'backward', include_artifacts: true });
      expect(page.items).toEqual([item]);
      expect(item.content).toHaveLength(4000);
    });

    it('AC-044: content over 4000 chars is cut to 3997 + "..."; content_json keeps everything', async () => {
      const long = 'z'.repeat(5000);
      const item = await s.transcript.append(transcriptRow({ content: long, content_json: { role: 'assistant', content: long } }));
      expect(item.content).toHaveLength(4000);
      expect(item.content?.endsWith('...')).toBe(true);
      expect(item.content_json).toEqual({ role: 'assistant', content: long });
      const exact = await s.transcript.append(transcriptRow({ content: 'q'.repeat(4000) }));
      expect(exact.content).toHaveLength(4000);
      expect(exact.content?.endsWith('q')).toBe(true);
    });

    it('AC-045: backward pages newest first, then the rest; forward after a cursor ascends', async () => {
      const all = await fill(130);
      await fill(5, 'c2');
      const first = await s.transcript.page({ conversation_id: 'c1', limit: 500, direction: 'backward', include_artifacts: false });
      expect(first.items).toHaveLength(100);
      expect(first.has_more).toBe(true);
      expect(first.items[0]?.content).toBe('item 130');
      expect(first.prev_seq).toBe(first.items[0]?.seq);
      expect(first.next_seq).toBe(first.items.at(-1)?.seq);
      const second = await s.transcript.page({
        conversation_id: 'c1',
        before_seq: first.next_seq,
        limit: 500,
        direction: 'backward',
        include_artifacts: false,
      });
      expect(second.items).toHaveLength(30);
      expect(second.has_more).toBe(false);
      expect(second.next_seq).toBeNull();
      expect(second.items.at(-1)?.content).toBe('item 1');
      const tenth = all[9]?.seq ?? null;
      const forward = await s.transcript.page({ conversation_id: 'c1', after_seq: tenth, limit: 5, direction: 'forward', include_artifacts: false });
      expect(forward.items.map((i) => i.content)).toEqual(['item 11', 'item 12', 'item 13', 'item 14', 'item 15']);
      expect(forward.has_more).toBe(true);
      expect(forward.next_seq).toBe(all[14]?.seq);
    });

    it('forward without a cursor gives the newest first; an empty conversation gives an empty page', async () => {
      await fill(3);
      const page = await s.transcript.page({ conversation_id: 'c1', limit: 2, direction: 'forward', include_artifacts: false });
      expect(page.items.map((i) => i.content)).toEqual(['item 3', 'item 2']);
      const empty = await s.transcript.page({ conversation_id: 'none', limit: 2, direction: 'backward', include_artifacts: false });
      expect(empty).toEqual({ items: [], has_more: false, next_seq: null, prev_seq: null });
    });

    it('AC-045: artifact_refs are [] unless include_artifacts', async () => {
      await s.transcript.append(transcriptRow());
      const without = await s.transcript.page({ conversation_id: 'c1', limit: 1, direction: 'backward', include_artifacts: false });
      expect(without.items[0]?.artifact_refs).toEqual([]);
      const withRefs = await s.transcript.page({ conversation_id: 'c1', limit: 1, direction: 'backward', include_artifacts: true });
      expect(withRefs.items[0]?.artifact_refs).toEqual([{ artifact_id: 'a1' }]);
    });

    describe('search', () => {
      const search = (query: string, over: { roles?: string[]; item_types?: string[]; top_k?: number; conversation_id?: string } = {}) =>
        s.transcript
          .search({ conversation_id: over.conversation_id ?? 'c1', query, top_k: over.top_k ?? 10, roles: over.roles, item_types: over.item_types })
          .then((items) => items.map((i) => i.content));

      beforeEach(async () => {
        await s.transcript.append(transcriptRow({ content: 'Deploy at 5%' }));
        await s.transcript.append(transcriptRow({ content: 'deploy_now', role: 'assistant' }));
        await s.transcript.append(transcriptRow({ content: 'deploy', conversation_id: 'c2' }));
      });

      it('AC-046: is case-insensitive, newest first, and stays in the conversation', async () => {
        expect(await search('DEPLOY')).toEqual(['deploy_now', 'Deploy at 5%']);
        expect(await search('deploy', { conversation_id: 'c2' })).toEqual(['deploy']);
      });

      it('AC-046: % and _ match literally', async () => {
        expect(await search('5%')).toEqual(['Deploy at 5%']);
        expect(await search('y_n')).toEqual(['deploy_now']);
        expect(await search('%')).toEqual(['Deploy at 5%']);
        expect(await search('_')).toEqual(['deploy_now']);
        expect(await search('y%n')).toEqual([]);
        expect(await search('dep%')).toEqual([]);
      });

      it('matches a backslash and a double quote literally', async () => {
        await s.transcript.append(transcriptRow({ content: 'path C:\\tmp\\x and "quoted" text' }));
        expect(await search('c:\\TMP')).toEqual(['path C:\\tmp\\x and "quoted" text']);
        expect(await search('"quoted"')).toEqual(['path C:\\tmp\\x and "quoted" text']);
        expect(await search('\\')).toEqual(['path C:\\tmp\\x and "quoted" text']);
      });

      it('AC-046: filters by role and item type', async () => {
        expect(await search('deploy', { roles: ['assistant'] })).toEqual(['deploy_now']);
        expect(await search('deploy', { roles: ['user', 'assistant'] })).toHaveLength(2);
        expect(await search('de', { roles: ['assistant'] })).toEqual(['deploy_now']);
        expect(await search('deploy', { item_types: ['tool_call'] })).toEqual([]);
      });

      it('an empty query matches every item with content; top_k is clamped to 1..100', async () => {
        await s.transcript.append(transcriptRow({ content: null }));
        expect(await search('')).toEqual(['deploy_now', 'Deploy at 5%']);
        expect(await search('', { top_k: 0 })).toEqual(['deploy_now']);
        for (let i = 0; i < 120; i++) await s.transcript.append(transcriptRow({ content: `deploy ${i}` }));
        expect(await search('deploy', { top_k: 1000 })).toHaveLength(100);
        expect(await search('', { top_k: 1000 })).toHaveLength(100);
      });

      it('includes artifact refs and finds phrases, short queries and non-ASCII case variants', async () => {
        const hit = await s.transcript.search({ conversation_id: 'c1', query: 'NOW', top_k: 5 });
        expect(hit[0]?.artifact_refs).toEqual([{ artifact_id: 'a1' }]);
        expect(await search('ploy at 5')).toEqual(['Deploy at 5%']);
        expect(await search('at 5% ')).toEqual([]);
        await s.transcript.append(transcriptRow({ content: 'Rendez-vous à l’ÉCOLE demain' }));
        expect(await search('école')).toEqual(['Rendez-vous à l’ÉCOLE demain']);
        expect(await search('É')).toEqual(['Rendez-vous à l’ÉCOLE demain']);
        expect(await search('zzz')).toEqual([]);
      });
    });

    it('reports the newest seq of a conversation', async () => {
      expect(await s.transcript.latestSeq('c1')).toBeNull();
      const items = await fill(3);
      await fill(1, 'c2');
      expect(await s.transcript.latestSeq('c1')).toBe(items[2]?.seq);
    });
  });
}
