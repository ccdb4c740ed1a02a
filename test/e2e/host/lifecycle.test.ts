// Acceptance §1, protocol and run lifecycle (AC-001 … AC-019), against the built CLI.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  CLI_BINDING,
  count,
  delta,
  done,
  dump,
  emit,
  errorOf,
  eventPath,
  firstLine,
  list,
  parseLines,
  pick,
  reports,
  SCRIPTED,
  say,
  scenario,
  str,
  summaries,
  api,
} from './harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Runner ids of the plugins bundled with lbot. */
const BUNDLED = 'plugin:langbot/';

describe('protocol and run lifecycle', () => {
  it('AC-001 non-streaming happy path', async () => {
    const s = await scenario();
    const r = await s.run([say('pong'), done()]);
    expect(r.stderr).toBe('');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('pong\n');

    const runs = await s.jsonList(['runs', 'list']);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'completed', runner_id: SCRIPTED });
    const runId = str(runs[0], 'run_id');

    const events = await s.page(['events', 'list', '--conversation', 'c1']);
    expect(list(events, 'items')).toHaveLength(1);
    expect(pick(events, 'items.0')).toMatchObject({ event_id: 'ev-1', run_id: runId, runner_id: SCRIPTED });

    const page = await s.page(['transcript', 'page', '--conversation', 'c1']);
    const items = list(page, 'items');
    expect(items).toHaveLength(2);
    expect(items[0]).toMatchObject({ role: 'user', content: 'ping' });
    expect(items[1]).toMatchObject({ role: 'assistant', content: 'pong', metadata: { run_id: runId } });
  });

  it('AC-002 streaming without duplication', async () => {
    const s = await scenario();
    const script = [delta('hel'), delta('lo'), say('hello'), done()];
    const text = await s.run(script);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toBe('hello\n');

    const json = await s.run(script, { json: true });
    expect(json.exitCode, json.stderr).toBe(0);
    const lines = parseLines(json.stdout);
    expect(lines.map((l) => l.type)).toEqual(['message.delta', 'message.delta', 'message.completed', 'run.summary']);
    expect(lines[3]).toMatchObject({ type: 'run.summary', status: 'completed' });

    const page = await s.page(['transcript', 'page', '--conversation', 'c1']);
    const assistant = list(page, 'items').filter((i) => pick(i, 'role') === 'assistant');
    // two runs, one assistant item each
    expect(assistant.map((i) => pick(i, 'content'))).toEqual(['hello', 'hello']);
  });

  it('AC-002 multiple completed messages keep their order', async () => {
    const s = await scenario();
    const r = await s.run([say('one'), say('two'), done()]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('one\ntwo\n');
    const page = await s.page(['transcript', 'page', '--conversation', 'c1']);
    const assistant = list(page, 'items').filter((i) => pick(i, 'role') === 'assistant');
    expect(assistant.map((i) => pick(i, 'content'))).toEqual(['one', 'two']);
  });

  it('AC-003 fresh run identity', async () => {
    const s = await scenario();
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await s.run([dump, done()], { json: true });
      expect(r.exitCode, r.stderr).toBe(0);
      const [ctx] = reports(r.stdout);
      const runId = str(summaries(r.stdout)[0], 'run_id');
      expect(pick(ctx, 'run_id')).toBe(runId);
      expect(pick(ctx, 'runtime.trace_id')).toBe(runId);
      ids.push(runId);
    }
    const runs = await s.jsonList(['runs', 'list']);
    expect(runs.map((r) => r.run_id)).toEqual(ids);
    for (const id of ids) {
      expect(id).toMatch(UUID);
      expect(id).not.toBe('ev-1');
    }
    expect(new Set(ids).size).toBe(2);
    const events = await s.page(['events', 'list', '--conversation', 'c1']);
    const ev1 = list(events, 'items').filter((e) => pick(e, 'event_id') === 'ev-1');
    expect(ev1.map((e) => pick(e, 'run_id')).sort()).toEqual([...ids].sort());
    const page = await s.page(['transcript', 'page', '--conversation', 'c1']);
    expect(list(page, 'items')).toHaveLength(4);
  });

  it('AC-004 context envelope is event-first', async () => {
    const s = await scenario();
    const script = [dump, done()];
    const r = await s.run(script, { json: true, config: { 'max-round': 5, custom: { a: 1 } } });
    expect(r.exitCode, r.stderr).toBe(0);
    const [ctx] = reports(r.stdout);
    expect(ctx).toMatchObject({
      event: { event_id: 'ev-1', event_type: 'message.received' },
      trigger: { type: 'message.received', source: 'api' },
      input: { text: 'ping' },
      delivery: { supports_streaming: true },
      runtime: { metadata: { streaming_supported: true } },
      bootstrap: null,
    });
    const extra = pick(ctx, 'adapter.extra');
    expect(extra).not.toHaveProperty('prompt');
    expect(JSON.stringify(extra)).not.toMatch(/history|messages/);
    expect(pick(ctx, 'config')).toEqual({ script, 'max-round': 5, custom: { a: 1 } });
  });

  it('AC-005 deadline derivation', async () => {
    const s = await scenario();
    const cases: Array<[string, Record<string, unknown>, number | null]> = [
      ['absent', {}, 300],
      ['5', { timeout: 5 }, 5],
      ['0', { timeout: 0 }, null],
      ['-3', { timeout: -3 }, null],
      ['"abc"', { timeout: 'abc' }, null],
    ];
    for (const [label, config, expected] of cases) {
      const before = Date.now() / 1000;
      const r = await s.run([dump, done()], { json: true, config });
      const after = Date.now() / 1000;
      expect(r.exitCode, label).toBe(0);
      const deadline = pick(reports(r.stdout)[0], 'runtime.deadline_at');
      if (expected === null) {
        expect(deadline, label).toBeNull();
      } else {
        const slack = Math.max(1, expected * 0.2);
        expect(typeof deadline, label).toBe('number');
        expect(Number(deadline), label).toBeGreaterThanOrEqual(before + expected - slack);
        expect(Number(deadline), label).toBeLessThanOrEqual(after + expected + slack);
      }
    }
  });

  it('AC-006 available APIs follow permissions and conversation', async () => {
    const s = await scenario();
    await s.editRunner((doc) => {
      const spec = doc.spec as Record<string, Record<string, unknown>>;
      spec.permissions = { ...spec.permissions, history: ['page'], events: ['get'], artifacts: [] };
    });
    const withConv = await s.run([dump, done()], { json: true });
    expect(withConv.exitCode, withConv.stderr).toBe(0);
    expect(pick(reports(withConv.stdout)[0], 'context.available_apis')).toMatchObject({
      history_page: true,
      history_search: false,
      event_get: true,
      event_page: false,
      artifact_read: false,
      state: true,
    });
    const noConv = await s.run([dump, done()], { json: true, event: 'friend.json' });
    expect(noConv.exitCode, noConv.stderr).toBe(0);
    expect(pick(reports(noConv.stdout)[0], 'context.available_apis')).toMatchObject({ history_page: false, event_get: true });
  });

  it('AC-007 history is referenced, never inlined', async () => {
    const s = await scenario();
    const base = JSON.parse(await readFile(eventPath('msg.json'), 'utf8')) as Record<string, unknown>;
    const events = [1, 2, 3, 4].map((n) => ({
      ...base,
      event_id: `ev-h${n}`,
      input: { text: `message ${n}`, contents: [{ type: 'text', text: `message ${n}` }], attachments: [] },
    }));
    const file = await s.writeJson('four.json', events);
    const r = await s.run([dump, done()], { json: true, event: file });
    expect(r.exitCode, r.stderr).toBe(0);
    const contexts = reports(r.stdout);
    expect(contexts).toHaveLength(4);
    const fourth = contexts[3];
    expect(pick(fourth, 'bootstrap')).toBeNull();
    expect(pick(fourth, 'input')).toMatchObject({ text: 'message 4', contents: [{ type: 'text', text: 'message 4' }] });
    expect(JSON.stringify(pick(fourth, 'input'))).not.toContain('message 3');
    expect(pick(fourth, 'context.inline_policy.mode')).toBe('current_event');
    expect(pick(fourth, 'context.has_history_before')).toBe(true);

    const page = await s.page(['transcript', 'page', '--conversation', 'c1', '--limit', '100']);
    const items = list(page, 'items');
    expect(items).toHaveLength(8);
    // newest item written before run 4: run 3's assistant reply (6th item in time order)
    const bySeq = [...items].sort((a, b) => Number(pick(a, 'seq')) - Number(pick(b, 'seq')));
    expect(pick(bySeq[5], 'role')).toBe('assistant');
    expect(pick(fourth, 'context.latest_cursor')).toBe(String(pick(bySeq[5], 'seq')));
  });

  it('AC-008 state snapshot round-trip', async () => {
    const s = await scenario();
    const first = await s.run([emit('state.updated', { scope: 'conversation', key: 'mood', value: 'happy' }), say('ok'), done()]);
    expect(first.exitCode, first.stderr).toBe(0);
    const second = await s.run([dump, done()], { json: true });
    expect(second.exitCode, second.stderr).toBe(0);
    const state = pick(reports(second.stdout)[0], 'state');
    expect(pick(state, 'conversation.mood')).toBe('happy');
    expect(pick(state, 'conversation')).toMatchObject({ 'external.conversation_id': 'c1' });
    expect(pick(state, 'subject')).toEqual({});
    expect(pick(state, 'runner')).toEqual({});
  });

  it('AC-009 non-message events', async () => {
    const s = await scenario();
    const r = await s.run([dump, done()], { json: true, event: 'join.json' });
    expect(r.exitCode, r.stderr).toBe(0);
    const ctx = reports(r.stdout)[0];
    expect(pick(ctx, 'input.text')).toBeNull();
    expect(pick(ctx, 'input.contents')).toEqual([]);
    const events = await s.page(['events', 'list', '--conversation', 'g1']);
    expect(list(events, 'items')).toContainEqual(expect.objectContaining({ event_type: 'group.member_joined', actor_id: 'u2' }));
    const page = await s.page(['transcript', 'page', '--conversation', 'g1']);
    const items = list(page, 'items');
    expect(items.filter((i) => pick(i, 'role') === 'user')).toEqual([]);
    expect(items.filter((i) => pick(i, 'role') === 'assistant')).toHaveLength(1);
  });

  it('AC-010 events without a conversation', async () => {
    const s = await scenario();
    const r = await s.run([dump, done()], { json: true, event: 'friend.json' });
    expect(r.exitCode, r.stderr).toBe(0);
    const ctx = reports(r.stdout)[0];
    expect(pick(ctx, 'conversation')).toBeNull();
    expect(pick(ctx, 'state.conversation')).toEqual({});
    const events = await s.page(['events', 'list']);
    expect(list(events, 'items')).toContainEqual(expect.objectContaining({ event_id: 'ev-friend-1', conversation_id: null }));
    expect(count(s.dataDir, 'SELECT count(*) FROM transcript')).toBe(0);
  });

  it('AC-011 external session handoff', async () => {
    const s = await scenario();
    const first = await s.run([
      emit('state.updated', { scope: 'conversation', key: 'external.session_id', value: 'sess-42' }),
      emit('state.updated', { scope: 'conversation', key: 'external.working_directory', value: '/srv/ws/x' }),
      say('ok'),
      done(),
    ]);
    expect(first.exitCode, first.stderr).toBe(0);
    const entries = await s.jsonList(['state', 'list', '--scope', 'conversation']);
    for (const [key, value] of [
      ['external.session_id', 'sess-42'],
      ['external.working_directory', '/srv/ws/x'],
    ]) {
      expect(entries).toContainEqual(expect.objectContaining({ key, value, runner_id: SCRIPTED, binding_id: CLI_BINDING, scope: 'conversation' }));
    }
    const second = await s.run([dump, done()], { json: true });
    expect(pick(reports(second.stdout)[0], 'state.conversation')).toMatchObject({
      'external.session_id': 'sess-42',
      'external.working_directory': '/srv/ws/x',
    });
  });

  it('AC-012 registry listing', async () => {
    const s = await scenario();
    await s.editRunner((doc) => {
      const spec = doc.spec as Record<string, unknown>;
      spec.config = [
        { name: 'model', type: 'llm-model-selector' },
        { name: 'topic', type: 'string', id: 'custom.topic' },
      ];
    });
    // The plugins dir's runners, after the ones bundled with lbot (plugin:langbot/…).
    const runners = (await s.jsonList(['runner', 'list'])).filter((r) => !String(r.id).startsWith(BUNDLED));
    expect(runners).toHaveLength(1);
    const runner = runners[0];
    for (const key of ['id', 'label', 'protocol_version', 'capabilities', 'permissions', 'config_schema']) expect(runner).toHaveProperty(key);
    expect(runner?.id).toBe(SCRIPTED);
    const ids = list(runner, 'config_schema').map((i) => pick(i, 'id'));
    expect(ids).toEqual([`${SCRIPTED}.model`, 'custom.topic']);
  });

  it('AC-013 a bad manifest does not break discovery', async () => {
    const s = await scenario();
    await s.editRunner((doc) => {
      if (doc.metadata && typeof doc.metadata === 'object') delete (doc.metadata as Record<string, unknown>).label;
    });
    await s.addPlugin('wrong-kind');
    await s.plugins.editYaml('wrong-kind', 'manifest.yaml', (doc) => {
      doc.kind = 'Tool';
    });
    await s.addPlugin('nameless');
    await s.plugins.editYaml('nameless', 'components/agent_runner/default.yaml', (doc) => {
      if (doc.metadata && typeof doc.metadata === 'object') delete (doc.metadata as Record<string, unknown>).name;
    });
    const r = await s.lbot(['--json', 'runner', 'list']);
    expect(r.exitCode, r.stderr).toBe(0);
    const runners = (JSON.parse(r.stdout) as Array<Record<string, unknown>>).filter((x) => !String(x.id).startsWith(BUNDLED));
    expect(runners.map((x) => x.id)).toEqual([SCRIPTED]);
    // the fallback is a pseudo-locale keyed by the name (runner-protocol.md §2.3 rule 4)
    expect(runners[0]?.label).toEqual({ default: 'default' });
    const warnings = r.stderr.split('\n').filter((l) => l.includes('warning'));
    expect(warnings).toHaveLength(2);
    expect(warnings.find((w) => w.includes('wrong-kind'))).toMatch(/kind/i);
    expect(warnings.find((w) => w.includes('nameless'))).toMatch(/name/i);
  });

  it('AC-014 incompatible protocol version', async () => {
    const s = await scenario();
    await s.editRunner((doc) => {
      (doc.spec as Record<string, unknown>).protocol_version = '2';
    });
    const r = await s.run([say('x'), done()], { json: true });
    expect(r.exitCode, r.stderr).toBe(1);
    const err = errorOf(r.stdout);
    expect(err?.code).toBe('runner.protocol_error');
    expect(String(err?.message)).toMatch(/protocol version 2\b.*supports protocol version 1\b/);
    expect(pick(err, 'details.supported')).toEqual(['1']);
    expect(r.stderr).toContain('error[runner.protocol_error]');
    const runners = await s.jsonList(['runner', 'list']);
    expect(runners[0]).toMatchObject({ id: SCRIPTED, compatible: false });
  });

  it('AC-015 runner id validation', async () => {
    const s = await scenario();
    for (const id of ['plugin:acme/scripted', 'plugin:acme//default', 'acme/scripted/default']) {
      const r = await s.run([say('x'), done()], { json: true, runner: id });
      expect(r.exitCode, id).toBe(3);
      const err = errorOf(r.stdout);
      expect(err?.code, id).toBe('runner.not_found');
      expect(String(err?.message), id).toContain('plugin:author/plugin/runner');
    }
    const events = await s.page(['events', 'list']);
    expect(list(events, 'items')).toEqual([]);
  });

  it('AC-016 legacy alias mapping', async () => {
    const s = await scenario();
    // The alias names the bundled local agent; with no model configured it refuses to run.
    const r = await s.run([say('x'), done()], { json: true, runner: 'local-agent' });
    expect(r.exitCode, r.stderr).toBe(1);
    expect(summaries(r.stdout)[0]).toMatchObject({ runner_id: 'plugin:langbot/local-agent/default', status: 'failed', error: { code: 'runner.error' } });
    expect(String(errorOf(r.stdout)?.message)).toContain('No LLM model configured');
  });

  it('AC-017 cancel with SIGINT', async () => {
    const s = await scenario();
    // A long grace period: the run can only end within the 5 s bound if the runner honoured run/cancel.
    const env = { LBOT__RUNS__CANCEL_GRACE_MS: '30000' };
    const child = s.spawn(await s.runArgs([delta('a'), { sleep_ms: 60000 }], { json: true }), { env });
    await firstLine(child, (l) => l.includes('message.delta'));
    const sentAt = Date.now();
    child.kill('SIGINT');
    const r = await child;
    expect(Date.now() - sentAt).toBeLessThan(5000);
    expect(r.exitCode, r.stderr).toBe(130);
    const runId = str(summaries(r.stdout)[0], 'run_id');
    const record = await s.json(['runs', 'show', runId]);
    expect(record).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });

    const late = await s.run([api('state.get', { scope: 'conversation', key: 'k' }, { as_run_id: runId }), done()], { json: true });
    expect(late.exitCode, late.stderr).toBe(0);
    expect(reports(late.stdout)[0]).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('AC-018 runner fails to start', async () => {
    const s = await scenario(['scripted', 'bad-start']);
    const r = await s.run([say('x'), done()], { json: true, runner: 'plugin:acme/bad-start/default' });
    expect(r.exitCode, r.stderr).toBe(1);
    expect(errorOf(r.stdout)?.code).toBe('runner.start_failed');
    const runs = await s.jsonList(['runs', 'list']);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'failed', error: { code: 'runner.start_failed' } });
    const events = await s.page(['events', 'list']);
    expect(list(events, 'items')).toContainEqual(expect.objectContaining({ event_id: 'ev-1', run_id: runs[0]?.run_id }));
  });

  it('AC-019 plugins disabled', async () => {
    const s = await scenario();
    const env = { LBOT__PLUGINS__ENABLED: 'false' };
    const listed = await s.lbot(['--json', 'runner', 'list'], { env });
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    const r = await s.run([say('x'), done()], { json: true, env });
    expect(r.exitCode, r.stderr).toBe(6);
    expect(errorOf(r.stdout)).toMatchObject({ code: 'plugins.disabled', retryable: false });
  });
});
