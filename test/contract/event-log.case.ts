// Contract suite for EventLog (runner-protocol.md §8.1; AC-040, AC-041): every implementation runs it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventLog, EventLogAppend } from '../../src/core/stores/types.js';
import type { Async } from '../../src/core/stores/async.js';
import type { OpenStore } from './harness.js';

export function eventRow(over: Partial<EventLogAppend> = {}): EventLogAppend {
  return {
    event_id: 'evt-1',
    event_type: 'message.received',
    event_time: 1_700_000_000,
    source: 'cli',
    bot_id: 'bot-1',
    workspace_id: null,
    conversation_id: 'c1',
    thread_id: null,
    actor_type: 'user',
    actor_id: 'u1',
    actor_name: 'Ada',
    subject_type: null,
    subject_id: null,
    input_text: 'hello',
    input_json: { text: 'hello', contents: [], attachments: [] },
    raw_ref: null,
    run_id: 'run-1',
    runner_id: 'plugin:acme/echo/default',
    metadata: { k: 'v' },
    ...over,
  };
}

export function eventLogContract(name: string, open: OpenStore<{ events: Async<EventLog> }>): void {
  describe(`EventLog contract (${name})`, () => {
    let s: Awaited<ReturnType<typeof open>>;
    beforeEach(async () => {
      s = await open();
    });
    afterEach(() => s.close());

    it('appends a record with id = seq, cursor = String(id), created_at and every column', async () => {
      const r = await s.events.append(eventRow());
      expect(r.seq).toBe(r.id);
      expect(r.cursor).toBe(String(r.id));
      expect(typeof r.created_at).toBe('number');
      expect(r).toMatchObject({
        event_id: 'evt-1',
        event_type: 'message.received',
        event_time: 1_700_000_000,
        source: 'cli',
        bot_id: 'bot-1',
        conversation_id: 'c1',
        actor_type: 'user',
        actor_id: 'u1',
        actor_name: 'Ada',
        input_summary: 'hello',
        input_json: { text: 'hello', contents: [], attachments: [] },
        run_id: 'run-1',
        runner_id: 'plugin:acme/echo/default',
        metadata: { k: 'v' },
      });
      expect(await s.events.findByEventId('evt-1')).toEqual([r]);
    });

    it('AC-040: cuts a long input text once to 1000 chars (997 + "...") and keeps the full text in input_json', async () => {
      const long = 'x'.repeat(1500);
      const r = await s.events.append(eventRow({ input_text: long, input_json: { text: long } }));
      expect(r.input_summary).toHaveLength(1000);
      expect(r.input_summary?.endsWith('...')).toBe(true);
      expect(r.input_summary?.slice(0, 997)).toBe('x'.repeat(997));
      expect(r.input_json).toEqual({ text: long });
      const exact = await s.events.append(eventRow({ input_text: 'y'.repeat(1000) }));
      expect(exact.input_summary).toBe('y'.repeat(1000));
      expect((await s.events.append(eventRow({ input_text: null, input_json: null }))).input_summary).toBeNull();
    });

    it('keeps one record per run for the same event_id, newest first', async () => {
      const a = await s.events.append(eventRow({ run_id: 'run-a' }));
      const b = await s.events.append(eventRow({ run_id: 'run-b' }));
      expect(b.id).toBeGreaterThan(a.id);
      expect((await s.events.findByEventId('evt-1')).map((r) => r.run_id)).toEqual(['run-b', 'run-a']);
      expect(await s.events.findByEventId('nope')).toEqual([]);
    });

    it('AC-041: pages newest first with a hard cap of 100, has_more and next_seq', async () => {
      for (let i = 0; i < 120; i++) await s.events.append(eventRow({ event_id: `e${i}` }));
      await s.events.append(eventRow({ event_id: 'other', conversation_id: 'c2' }));
      const first = await s.events.page({ conversation_id: 'c1', limit: 500 });
      expect(first.items).toHaveLength(100);
      expect(first.has_more).toBe(true);
      expect(first.next_seq).toBe(first.items.at(-1)?.seq);
      const seqs = first.items.map((r) => r.seq);
      expect(seqs).toEqual([...seqs].sort((x, y) => y - x));
      expect(first.items[0]?.event_id).toBe('e119');
      const second = await s.events.page({ conversation_id: 'c1', limit: 500, before_seq: first.next_seq });
      expect(second.items).toHaveLength(20);
      expect(second.has_more).toBe(false);
      expect(second.next_seq).toBeNull();
      const ids = new Set([...first.items, ...second.items].map((r) => r.event_id));
      expect(ids.size).toBe(120);
      expect(ids.has('other')).toBe(false);
    });

    it('AC-041: filters by event type', async () => {
      for (let i = 0; i < 3; i++) await s.events.append(eventRow({ event_id: `m${i}` }));
      for (let i = 0; i < 2; i++) await s.events.append(eventRow({ event_id: `a${i}`, event_type: 'artifact.created' }));
      await s.events.append(eventRow({ event_id: 'x', event_type: 'artifact.created', conversation_id: 'c2' }));
      const page = await s.events.page({ conversation_id: 'c1', event_types: ['artifact.created'], limit: 50 });
      expect(page.items.map((r) => r.event_id)).toEqual(['a1', 'a0']);
      expect((await s.events.page({ conversation_id: 'c1', event_types: ['artifact.created', 'message.received'], limit: 50 })).items).toHaveLength(5);
      expect((await s.events.page({ conversation_id: 'c1', event_types: [], limit: 50 })).items).toHaveLength(5);
    });

    it('treats conversation_id undefined as every conversation and null as none', async () => {
      await s.events.append(eventRow({ event_id: 'in-c1' }));
      await s.events.append(eventRow({ event_id: 'in-c2', conversation_id: 'c2' }));
      await s.events.append(eventRow({ event_id: 'no-conv', conversation_id: null }));
      expect((await s.events.page({ limit: 10 })).items.map((r) => r.event_id)).toEqual(['no-conv', 'in-c2', 'in-c1']);
      expect((await s.events.page({ conversation_id: null, limit: 10 })).items.map((r) => r.event_id)).toEqual(['no-conv']);
      expect((await s.events.page({ conversation_id: 'c2', limit: 10 })).items.map((r) => r.event_id)).toEqual(['in-c2']);
    });

    it('clamps the limit to at least 1', async () => {
      await s.events.append(eventRow({ event_id: 'a' }));
      await s.events.append(eventRow({ event_id: 'b' }));
      const page = await s.events.page({ conversation_id: 'c1', limit: 0 });
      expect(page.items.map((r) => r.event_id)).toEqual(['b']);
      expect(page.has_more).toBe(true);
    });

    it('reports the newest seq of a conversation', async () => {
      expect(await s.events.latestSeq('c1')).toBeNull();
      await s.events.append(eventRow());
      const last = await s.events.append(eventRow());
      await s.events.append(eventRow({ conversation_id: 'c2' }));
      expect(await s.events.latestSeq('c1')).toBe(last.seq);
    });

    it('lists conversations by last activity with their event count and last event', async () => {
      expect(await s.events.conversations(10)).toEqual([]);
      await s.events.append(eventRow({ event_id: 'a1' }));
      await s.events.append(eventRow({ conversation_id: 'c2', event_id: 'b1', actor_name: 'Bo' }));
      const last = await s.events.append(eventRow({ event_id: 'a2', event_type: 'member.joined', actor_name: null, input_text: null, run_id: null }));
      await s.events.append(eventRow({ conversation_id: null, event_id: 'x' }));
      const list = await s.events.conversations(10);
      expect(list.map((c) => c.conversation_id)).toEqual(['c1', 'c2']);
      expect(list[0]).toMatchObject({
        events: 2,
        last_seq: last.seq,
        last_event_type: 'member.joined',
        last_actor_id: 'u1',
        last_actor_name: null,
        last_input: null,
        last_run_id: null,
      });
      expect(list[1]).toMatchObject({ events: 1, last_actor_name: 'Bo', last_input: 'hello', last_run_id: 'run-1' });
      expect((await s.events.conversations(1)).map((c) => c.conversation_id)).toEqual(['c1']);
    });
  });
}
