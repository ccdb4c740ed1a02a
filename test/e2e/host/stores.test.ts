// Acceptance §3, stores and pull APIs (AC-040 … AC-060), against the built CLI.
import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  api,
  CLI_BINDING,
  done,
  dump,
  emit,
  eventPath,
  list,
  pick,
  probe,
  reports,
  say,
  scenario,
  SCRIPTED,
  str,
  type Scenario,
  type Step,
} from './harness.js';

type Json = Record<string, unknown>;

async function baseEvent(): Promise<Json> {
  return JSON.parse(await readFile(eventPath('msg.json'), 'utf8')) as Json;
}

const textInput = (text: string, attachments: unknown[] = []) => ({ text, contents: [{ type: 'text', text }], attachments });

/** Writes an event file: msg.json with the given fields replaced (an array of overrides writes an array). */
async function events(s: Scenario, fields: Json | Json[]): Promise<string> {
  const base = await baseEvent();
  const value = Array.isArray(fields) ? fields.map((f) => ({ ...base, ...f })) : { ...base, ...fields };
  return s.writeJson(`event-${randomUUID()}.json`, value);
}

const quiet = (action: string, args: Json = {}): Step => ({ api: { action, args } });

/** The transcript of a conversation, oldest first (all pages). */
async function transcript(s: Scenario, conversation: string): Promise<unknown[]> {
  const items: unknown[] = [];
  let before: string | null = null;
  for (;;) {
    const page: unknown = await s.page(['transcript', 'page', '--conversation', conversation, '--limit', '100', ...(before ? ['--before', before] : [])]);
    items.unshift(...list(page, 'items'));
    if (!pick(page, 'has_more')) return items;
    before = String(pick(page, 'next_seq'));
  }
}

describe('stores and pull APIs', () => {
  it('AC-040 event log record shape', async () => {
    const s = await scenario();
    const text = 'x'.repeat(1500);
    const r = await s.run([say('ok'), done()], { event: await events(s, { input: textInput(text) }) });
    expect(r.exitCode, r.stderr).toBe(0);
    const page = await s.page(['events', 'list', '--conversation', 'c1']);
    const item = list(page, 'items')[0];
    for (const key of [
      'event_id',
      'event_type',
      'source',
      'conversation_id',
      'actor_type',
      'actor_id',
      'actor_name',
      'subject_type',
      'subject_id',
      'run_id',
      'runner_id',
      'created_at',
    ]) {
      expect(item, key).toHaveProperty(key);
    }
    expect(item).toMatchObject({
      event_id: 'ev-1',
      event_type: 'message.received',
      source: 'api',
      conversation_id: 'c1',
      actor_type: 'user',
      actor_id: 'u1',
      actor_name: 'Ann',
      subject_type: 'message',
      subject_id: 'm1',
      runner_id: SCRIPTED,
    });
    const summary = str(item, 'input_summary');
    expect(summary).toHaveLength(1000);
    expect(summary.endsWith('...')).toBe(true);
    expect(pick(item, 'input_json.text')).toBe(text);
  });

  it('AC-041 event paging', async () => {
    const s = await scenario();
    const file = await events(
      s,
      Array.from({ length: 120 }, (_, i) => ({ event_id: `ev-${String(i).padStart(3, '0')}` })),
    );
    const r = await s.run([say('ok'), done()], { event: file });
    expect(r.exitCode, r.stderr).toBe(0);
    const first = await s.page(['events', 'list', '--conversation', 'c1', '--limit', '500']);
    const firstItems = list(first, 'items');
    expect(firstItems).toHaveLength(100);
    expect(pick(first, 'has_more')).toBe(true);
    expect(pick(first, 'next_seq')).toEqual(expect.any(Number));
    const seqs = firstItems.map((e) => Number(pick(e, 'seq')));
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(pick(firstItems[0], 'event_id')).toBe('ev-119');
    const second = await s.page(['events', 'list', '--conversation', 'c1', '--limit', '500', '--before', String(pick(first, 'next_seq'))]);
    expect(list(second, 'items')).toHaveLength(20);
    expect(pick(second, 'has_more')).toBe(false);
    expect(pick(second, 'next_seq')).toBeNull();
    const ids = new Set([...firstItems, ...list(second, 'items')].map((e) => pick(e, 'event_id')));
    expect(ids.size).toBe(120);
  });

  it('AC-041 event type filter (CLI and events.page)', async () => {
    const s = await scenario();
    const two = await events(s, [{ event_id: 'ev-a1' }, { event_id: 'ev-a2' }]);
    const made = await s.run([emit('artifact.created', { artifact_type: 'file', name: 'a.txt', content_base64: 'YQ==' }), say('ok'), done()], { event: two });
    expect(made.exitCode, made.stderr).toBe(0);
    const r = await s.run([api('events.page', { event_types: ['artifact.created'] }), done()], { json: true });
    expect(r.exitCode, r.stderr).toBe(0);
    const page = await s.page(['events', 'list', '--conversation', 'c1']);
    const types = list(page, 'items').map((e) => pick(e, 'event_type'));
    expect(types.filter((t) => t === 'message.received')).toHaveLength(3);
    expect(types.filter((t) => t === 'artifact.created')).toHaveLength(2);
    const filtered = await s.page(['events', 'list', '--conversation', 'c1', '--type', 'artifact.created']);
    expect(list(filtered, 'items')).toHaveLength(2);
    const viaApi = reports(r.stdout)[0];
    expect(pick(viaApi, 'ok')).toBe(true);
    expect(list(viaApi, 'result.items').map((e) => pick(e, 'event_type'))).toEqual(['artifact.created', 'artifact.created']);
  });

  it('AC-043 transcript order and cursors', async () => {
    const s = await scenario();
    const r = await s.run([say('ok'), done()], { event: 'seq.json' });
    expect(r.exitCode, r.stderr).toBe(0);
    const items = list(await s.page(['transcript', 'page', '--conversation', 'c1']), 'items');
    expect(items.map((i) => pick(i, 'role'))).toEqual(['user', 'assistant', 'user', 'assistant']);
    const seqs = items.map((i) => Number(pick(i, 'seq')));
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] ?? Infinity);
    for (const i of items) expect(pick(i, 'cursor')).toBe(String(pick(i, 'seq')));
    for (const i of items.filter((x) => pick(x, 'role') === 'assistant')) {
      expect(pick(i, 'metadata.run_id')).toEqual(expect.any(String));
      expect(pick(i, 'metadata.runner_id')).toBe(SCRIPTED);
    }
  });

  it('AC-044 transcript content bound', async () => {
    const s = await scenario();
    const long = 'y'.repeat(4990) + 'END-MARKER';
    const r = await s.run([say(long), done()]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${long}\n`);
    const items = list(await s.page(['transcript', 'page', '--conversation', 'c1']), 'items');
    const assistant = items.find((i) => pick(i, 'role') === 'assistant');
    expect(str(assistant, 'content')).toHaveLength(4000);
    expect(str(assistant, 'content').endsWith('...')).toBe(true);
    expect(pick(assistant, 'content_json.content')).toBe(long);
  });

  it('AC-045 history.page semantics', async () => {
    const s = await scenario();
    const file = await events(
      s,
      Array.from({ length: 65 }, (_, i) => ({ event_id: `ev-h${i}`, input: textInput(`question ${i}`) })),
    );
    // every assistant item carries one artifact ref
    const setup = await s.run([emit('artifact.created', { artifact_type: 'file', name: 'n.txt', content_base64: 'YQ==' }), say('answer'), done()], {
      event: file,
    });
    expect(setup.exitCode, setup.stderr).toBe(0);
    const all = await transcript(s, 'c1');
    expect(all).toHaveLength(130);
    const seqOf = (n: number) => String(pick(all[n - 1], 'seq'));
    // A member-joined event in c1 adds no user item, so the run sees exactly the 130 items.
    const joined = await events(s, { event_id: 'ev-join', event_type: 'group.member_joined', input: { text: null, contents: [] } });
    const r = await s.run(
      [
        api('history.page', { limit: 500 }),
        api('history.page', { before_cursor: seqOf(31) }),
        api('history.page', { direction: 'forward', after_cursor: seqOf(10), limit: 5 }),
        api('history.page', { direction: 'forward', after_cursor: seqOf(10), limit: 5, include_artifacts: true }),
        done(),
      ],
      { json: true, event: joined },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [first, second, forward, withRefs] = reports(r.stdout);
    const firstItems = list(first, 'result.items');
    expect(firstItems).toHaveLength(100);
    expect(pick(first, 'result.has_more')).toBe(true);
    expect(pick(first, 'result.next_cursor')).toBe(seqOf(31));
    expect(firstItems.map((i) => pick(i, 'seq'))).toEqual(
      all
        .slice(30)
        .reverse()
        .map((i) => pick(i, 'seq')),
    );
    expect(list(second, 'result.items')).toHaveLength(30);
    expect(pick(second, 'result.has_more')).toBe(false);
    expect(list(forward, 'result.items').map((i) => pick(i, 'seq'))).toEqual(all.slice(10, 15).map((i) => pick(i, 'seq')));
    for (const page of [first, second, forward]) for (const i of list(page, 'result.items')) expect(pick(i, 'artifact_refs')).toEqual([]);
    const refs = list(withRefs, 'result.items')
      .filter((i) => pick(i, 'role') === 'assistant')
      .map((i) => list(i, 'artifact_refs').length);
    expect(refs.length).toBeGreaterThan(0);
    for (const n of refs) expect(n).toBe(1);
  });

  it('AC-046 history.search', async () => {
    const s = await scenario();
    const c1 = await events(s, { event_id: 'ev-s1', input: textInput('Deploy at 5%') });
    // "tally 5 yen" matches 5% and y_n only if the wildcards were not escaped
    expect((await s.run([say('deploy_now'), say('tally 5 yen'), done()], { event: c1 })).exitCode).toBe(0);
    const c2 = await events(s, { event_id: 'ev-s2', conversation_id: 'c2', input: textInput('deploy') });
    expect((await s.run([say('noted'), done()], { event: c2 })).exitCode).toBe(0);
    const joined = await events(s, { event_id: 'ev-join', event_type: 'group.member_joined', input: { text: null, contents: [] } });
    // Each report becomes a transcript item too, so the queries run in an order where earlier reports cannot match.
    const r = await s.run(
      [
        api('history.search', { query: 'y_n' }),
        api('history.search', { query: '5%' }),
        api('history.search', { query: 'DEPLOY' }),
        api('history.search', { query: 'deploy', filters: { roles: ['assistant'] } }),
        done(),
      ],
      { json: true, event: joined },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [underscore, percent, upper, assistant] = reports(r.stdout).map((o) => list(o, 'result.items'));
    const contents = (items: unknown[] | undefined) => (items ?? []).map((i) => pick(i, 'content'));
    expect(contents(underscore)).toEqual(['deploy_now']);
    expect(contents(percent)).toEqual(['Deploy at 5%']);
    expect(contents(upper)).toEqual(expect.arrayContaining(['Deploy at 5%', 'deploy_now']));
    for (const i of upper ?? []) expect(pick(i, 'conversation_id')).toBe('c1');
    expect(contents(assistant)).toContain('deploy_now');
    for (const i of assistant ?? []) expect(pick(i, 'role')).toBe('assistant');
  });

  it('AC-047 state API CRUD and list bounds', async () => {
    const s = await scenario();
    const conv = { scope: 'conversation' };
    const r = await s.run(
      [
        api('state.set', { ...conv, key: 'a', value: { n: 1 } }),
        api('state.get', { ...conv, key: 'a' }),
        api('state.list', { ...conv, prefix: 'a' }),
        api('state.delete', { ...conv, key: 'a' }),
        api('state.delete', { ...conv, key: 'a' }),
        api('state.get', { ...conv, key: 'missing' }),
        done(),
      ],
      { json: true },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [set, get, lst, del1, del2, missing] = reports(r.stdout);
    expect(set).toMatchObject({ ok: true });
    expect(get).toEqual({ ok: true, result: { value: { n: 1 } } });
    expect(lst).toEqual({ ok: true, result: { keys: ['a'], has_more: false } });
    expect(del1).toEqual({ ok: true, result: { success: true } });
    expect(del2).toEqual({ ok: true, result: { success: false } });
    expect(missing).toEqual({ ok: true, result: { value: null } });

    const keys = Array.from({ length: 150 }, (_, i) => `k${String(i).padStart(3, '0')}`);
    const bounds = await s.run(
      [
        ...[...keys].reverse().map((key) => quiet('state.set', { ...conv, key, value: key })),
        api('state.list', { ...conv, limit: 1000 }),
        api('state.list', { ...conv, prefix: 'k14' }),
        done(),
      ],
      { json: true },
    );
    expect(bounds.exitCode, bounds.stderr).toBe(0);
    const [hundred, k14] = reports(bounds.stdout);
    expect(pick(hundred, 'result.keys')).toEqual(keys.slice(0, 100));
    expect(pick(hundred, 'result.has_more')).toBe(true);
    expect(pick(k14, 'result.keys')).toEqual(keys.slice(140));
  });

  it('AC-047 state key alias', async () => {
    const s = await scenario();
    const r = await s.run(
      [
        api('state.set', { scope: 'conversation', key: 'conversation_id', value: 'x-1' }),
        api('state.get', { scope: 'conversation', key: 'conversation_id' }),
        api('state.get', { scope: 'conversation', key: 'external.conversation_id' }),
        done(),
      ],
      { json: true },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [, short, long] = reports(r.stdout);
    expect(short).toEqual({ ok: true, result: { value: 'x-1' } });
    expect(long).toEqual({ ok: true, result: { value: 'x-1' } });
    const entries = await s.jsonList(['state', 'list', '--scope', 'conversation']);
    expect(entries.map((e) => e.key)).toEqual(['external.conversation_id']);
    expect(entries[0]).toMatchObject({ value: 'x-1' });
  });

  it('AC-050 state isolation by binding and runner', async () => {
    const s = await scenario();
    const other = await s.addPlugin('scripted-two');
    const b1 = await s.writeJson('b1.json', { binding_id: 'b1', runner_id: SCRIPTED });
    const b2 = await s.writeJson('b2.json', { binding_id: 'b2', runner_id: SCRIPTED });
    const cases: Array<[string, string, string]> = [
      [b1, SCRIPTED, 'v-b1'],
      [b2, SCRIPTED, 'v-b2'],
      [b1, other, 'v-b1-other'],
    ];
    for (const [binding, runner, value] of cases) {
      const r = await s.run([quiet('state.set', { scope: 'conversation', key: 'k', value }), api('state.get', { scope: 'conversation', key: 'k' }), done()], {
        json: true,
        runner,
        args: ['--binding', binding],
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(reports(r.stdout)[0]).toEqual({ ok: true, result: { value } });
    }
    // each reads its own value back in a later run too
    for (const [binding, runner, value] of cases) {
      const r = await s.run([api('state.get', { scope: 'conversation', key: 'k' }), done()], { json: true, runner, args: ['--binding', binding] });
      expect(reports(r.stdout)[0]).toEqual({ ok: true, result: { value } });
    }
    const entries = (await s.jsonList(['state', 'list'])).filter((e) => e.key === 'k');
    expect(entries).toHaveLength(3);
    expect(new Set(entries.map((e) => e.scope_key)).size).toBe(3);
    expect(entries.map((e) => [e.binding_id, e.runner_id, e.value]).sort()).toEqual(cases.map(([b, runner, v]) => [b === b1 ? 'b1' : 'b2', runner, v]).sort());
  });

  it('AC-051 actor scope follows the actor across conversations', async () => {
    const s = await scenario();
    const set = await s.run([emit('state.updated', { scope: 'actor', key: 'lang', value: 'fr' }), say('ok'), done()]);
    expect(set.exitCode, set.stderr).toBe(0);
    const c2 = await events(s, { event_id: 'ev-c2', conversation_id: 'c2' });
    const same = await s.run([dump, done()], { json: true, event: c2 });
    expect(pick(reports(same.stdout)[0], 'state.actor.lang')).toBe('fr');
    const u9 = await events(s, { event_id: 'ev-u9', actor: { actor_type: 'user', actor_id: 'u9', actor_name: 'Nine' } });
    const stranger = await s.run([dump, done()], { json: true, event: u9 });
    expect(pick(reports(stranger.stdout)[0], 'state.actor')).toEqual({});
  });

  it('AC-052 state value size limit (API and stream paths)', async () => {
    const s = await scenario();
    const LIMIT = 262_144;
    // a JSON string serializes with its two quotes
    const exact = 'a'.repeat(LIMIT - 2);
    const over = 'a'.repeat(LIMIT - 1);
    const r = await s.run(
      [
        api('state.set', { scope: 'conversation', key: 'exact', value: exact }),
        api('state.set', { scope: 'conversation', key: 'too-big', value: over }),
        emit('state.updated', { scope: 'conversation', key: 'streamed', value: over }),
        say('ok'),
        done(),
      ],
      { json: true },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [ok, tooBig] = reports(r.stdout);
    expect(ok).toMatchObject({ ok: true });
    expect(tooBig).toMatchObject({ ok: false, error: { code: 'payload_too_large' } });
    expect(r.stderr).toMatch(/warning.*streamed.*262[,_]?145|warning.*262[,_]?145.*streamed/);
    const keys = (await s.jsonList(['state', 'list'])).map((e) => e.key);
    expect(keys).toContain('exact');
    expect(keys).not.toContain('too-big');
    expect(keys).not.toContain('streamed');
  });

  it('AC-052 variant: a 300 KiB value on the stream path', async () => {
    const s = await scenario();
    const r = await s.run([emit('state.updated', { scope: 'conversation', key: 'big', value: 'b'.repeat(300 * 1024) }), say('ok'), done()]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/warning.*big.*262[,_]?144|warning.*262[,_]?144.*big/);
    expect((await s.jsonList(['state', 'list'])).map((e) => e.key)).not.toContain('big');
  });

  it('AC-053 state disabled by policy', async () => {
    const s = await scenario();
    const binding = await s.writeJson('b.json', { binding_id: 'b-off', runner_id: SCRIPTED, state_policy: { enable_state: false } });
    const r = await s.run(
      [dump, api('state.set', { scope: 'conversation', key: 'k', value: 1 }), emit('state.updated', { scope: 'conversation', key: 'u', value: 1 }), done()],
      {
        json: true,
        args: ['--binding', binding],
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [ctx, set] = reports(r.stdout);
    expect(pick(ctx, 'state')).toEqual({ conversation: {}, actor: {}, subject: {}, runner: {} });
    expect(pick(ctx, 'context.available_apis.state')).toBe(false);
    expect(set).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(r.stderr).toMatch(/warning.*state\.updated.*conversation:u/);
    expect(await s.jsonList(['state', 'list'])).toEqual([]);
  });

  it('AC-054 scope not enabled or unknown', async () => {
    const s = await scenario();
    const r = await s.run(
      [
        api('state.set', { scope: 'runner', key: 'k', value: 1 }),
        api('state.set', { scope: 'galaxy', key: 'k', value: 1 }),
        emit('state.updated', { scope: 'runner', key: 'r', value: 1 }),
        done(),
      ],
      { json: true },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [runner, galaxy] = reports(r.stdout);
    expect(runner).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(galaxy).toMatchObject({ ok: false, error: { code: 'invalid_argument' } });
    expect(r.stderr).toMatch(/warning.*state\.updated.*runner:r/);
    expect(await s.jsonList(['state', 'list'])).toEqual([]);
  });

  it('AC-054 variant: a scope the event has no identity for', async () => {
    const s = await scenario();
    const binding = await s.writeJson('b.json', {
      binding_id: 'b1',
      runner_id: SCRIPTED,
      state_policy: { state_scopes: ['conversation', 'actor', 'subject'] },
    });
    const base = await baseEvent();
    delete base.subject;
    const event = await s.writeJson('no-subject.json', base);
    const r = await s.run([api('state.set', { scope: 'subject', key: 'k', value: 1 }), done()], { json: true, event, args: ['--binding', binding] });
    expect(r.exitCode, r.stderr).toBe(0);
    const [set] = reports(r.stdout);
    expect(set).toMatchObject({ ok: false, error: { code: 'invalid_argument' } });
    expect(str(set, 'error.message')).toMatch(/subject/);
  });

  it('AC-056 input attachments become artifacts', async () => {
    const s = await scenario();
    const attachments = [
      { artifact_id: 'a1', artifact_type: 'image', content: 'data:image/png;base64,iVBORw0KGgo=' },
      { artifact_id: 'a2', artifact_type: 'file', url: 'https://example.invalid/f.pdf' },
      { artifact_id: 'a3', artifact_type: 'file', id: 'plat-77' },
      { artifact_id: 'a4', artifact_type: 'file', content: 'not base64 at all!' },
    ];
    const r = await s.run([say('ok'), done()], { event: await events(s, { input: textInput('see attached', attachments) }) });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/warning.*a4/);
    const listed = await s.jsonList(['artifacts', 'list']);
    const byId = new Map(listed.map((a) => [a.artifact_id, a]));
    expect(byId.get('a1')).toMatchObject({ source: 'platform', mime_type: 'image/png', size_bytes: 8 });
    expect(byId.get('a2')).toMatchObject({ source: 'platform', reference: 'https://example.invalid/f.pdf' });
    expect(byId.get('a2')?.storage_type).not.toBe('binary_storage');
    expect(byId.get('a3')).toMatchObject({ source: 'platform', reference: 'plat-77' });
    expect(byId.get('a3')?.storage_type).not.toBe('binary_storage');
    expect(byId.has('a4')).toBe(false);
  });

  it('AC-057 artifact.created flow', async () => {
    const s = await scenario();
    const r = await s.run([
      emit('artifact.created', { artifact_id: 'art-r', artifact_type: 'file', name: 'r.txt', mime_type: 'text/plain', content_base64: 'aGVsbG8=' }),
      emit('message.completed', {
        message: { role: 'assistant', content: 'see file', artifact_refs: [{ artifact_id: 'art-r' }, { artifact_id: 'art-other' }] },
      }),
      say('second'),
      done(),
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const artifact = await s.json(['artifacts', 'show', 'art-r']);
    expect(artifact).toMatchObject({ source: 'runner', size_bytes: 5, name: 'r.txt', mime_type: 'text/plain' });
    const logged = await s.page(['events', 'list', '--conversation', 'c1', '--type', 'artifact.created']);
    expect(list(logged, 'items')).toHaveLength(1);
    expect(pick(list(logged, 'items')[0], 'input_json.artifact_id')).toBe('art-r');
    const assistant = list(await s.page(['transcript', 'page', '--conversation', 'c1']), 'items').filter((i) => pick(i, 'role') === 'assistant');
    expect(list(assistant[0], 'artifact_refs').map((ref) => pick(ref, 'artifact_id'))).toEqual(['art-r', 'art-other']);
    expect(list(assistant[1], 'artifact_refs')).toEqual([]);
  });

  it('AC-058 public artifact metadata', async () => {
    const s = await scenario();
    const r = await s.run(
      [
        emit('artifact.created', { artifact_id: 'art-m', artifact_type: 'file', name: 'm.txt', mime_type: 'text/plain', content_base64: 'aGVsbG8=' }),
        api('artifacts.metadata', { artifact_id: 'art-m' }),
        done(),
      ],
      { json: true },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const meta = pick(reports(r.stdout)[0], 'result');
    expect(Object.keys(meta as object).sort()).toEqual(
      [
        'artifact_id',
        'artifact_type',
        'mime_type',
        'name',
        'size_bytes',
        'sha256',
        'source',
        'conversation_id',
        'run_id',
        'runner_id',
        'created_at',
        'expires_at',
        'metadata',
      ].sort(),
    );
    expect(meta).toMatchObject({
      artifact_id: 'art-m',
      size_bytes: 5,
      sha256: createHash('sha256').update('hello').digest('hex'),
      source: 'runner',
      conversation_id: 'c1',
    });
    expect(JSON.stringify(meta)).not.toMatch(/storage_key|storage_type|bot_id|workspace_id|sha256\/|artifacts\//);
  });

  it('AC-059 artifact range reads', async () => {
    const s = await scenario();
    const bytes = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 11)) & 0xff;
    const sha = createHash('sha256').update(bytes).digest('hex');
    const setup = await s.run([say('stored'), done()], {
      event: await events(s, { input: textInput('big', [{ artifact_id: 'big', artifact_type: 'file', content: bytes.toString('base64') }]) }),
    });
    expect(setup.exitCode, setup.stderr).toBe(0);
    const runner = await s.addPlugin('reader', {
      mainJs: probe(`
        const read = async (args) => {
          try {
            const r = await api.request('artifacts.read_range', { run_id: ctx.run_id, artifact_id: 'big', ...args });
            const data = Buffer.from(r.content_base64 ?? '', 'base64');
            return { ok: true, length: data.length, has_more: r.has_more, data };
          } catch (err) { return { ok: false, code: err.error?.code }; }
        };
        const first = await read({});
        const rest = await read({ offset: 1048576, length: 52428800 });
        const out = [first, rest, await read({ offset: -1 }), await read({ length: 0 }), await read({ offset: 3145728 })];
        const sha256 = first.ok && rest.ok ? createHash('sha256').update(Buffer.concat([first.data, rest.data])).digest('hex') : null;
        yield message(JSON.stringify({ reads: out.map(({ data, ...r }) => r), sha256 }));
        yield completed();`),
    });
    const r = await s.lbot(['--json', 'run', '--event', eventPath('msg.json'), '--runner', runner]);
    expect(r.exitCode, r.stderr).toBe(0);
    const report = reports(r.stdout)[0];
    expect(pick(report, 'reads')).toEqual([
      { ok: true, length: 1048576, has_more: true },
      { ok: true, length: 2 * 1048576, has_more: false },
      { ok: false, code: 'invalid_argument' },
      { ok: false, code: 'invalid_argument' },
      { ok: true, length: 0, has_more: false },
    ]);
    expect(pick(report, 'sha256')).toBe(sha);
    // the CLI reads the same bytes
    const cli = await s.json(['artifacts', 'read', 'big', '--length', String(10 * 1024 * 1024)]);
    expect(
      createHash('sha256')
        .update(Buffer.from(str(cli, 'content_base64'), 'base64'))
        .digest('hex'),
    ).toBe(sha);
  });

  it('AC-060 durability across processes', async () => {
    const s = await scenario();
    const r = await s.run([
      emit('state.updated', { scope: 'conversation', key: 'external.session_id', value: 'sess-42' }),
      emit('state.updated', { scope: 'conversation', key: 'external.working_directory', value: '/srv/ws/x' }),
      say('ok'),
      done(),
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const page = await s.page(['transcript', 'page', '--conversation', 'c1']);
    expect(list(page, 'items').map((i) => [pick(i, 'role'), pick(i, 'content')])).toEqual([
      ['user', 'ping'],
      ['assistant', 'ok'],
    ]);
    expect(await s.page(['transcript', 'page', '--conversation', 'c1'])).toEqual(page);
    const state = await s.jsonList(['state', 'list']);
    expect(state.map((e) => [e.key, e.value, e.binding_id]).sort()).toEqual([
      ['external.session_id', 'sess-42', CLI_BINDING],
      ['external.working_directory', '/srv/ws/x', CLI_BINDING],
    ]);
  });
});
