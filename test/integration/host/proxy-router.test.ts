// The proxy router against real SQLite stores: authorization order, refusal codes and reasons, and the
// audit of every call (runner-protocol.md §6.2–§7.1; host side of AC-027–AC-029, AC-032, AC-035).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/core/host/api-error.js';
import type { Clock, ProxyCall } from '../../../src/core/host/ports.js';
import { ModelContexts } from '../../../src/core/host/model-contexts.js';
import { ProxyRouter } from '../../../src/core/host/proxy-router.js';
import { SessionRegistry, type RunSession } from '../../../src/core/host/session.js';
import { openSqliteStores, type SqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { createModelProvider } from '../../../src/runtime/models/providers.js';
import { binding, descriptor, envelope, models, runSession } from '../../unit/host/fixtures.js';

let dir: string;
let stores: SqliteStores;
let nowMs: number;
let sessions: SessionRegistry;
let router: ProxyRouter;
let contexts: ModelContexts;
/** The message lists the model provider was called with, in order. */
let upstream: unknown[][];

const clock: Clock = { now: () => nowMs, after: () => () => {} };

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'lbot-router-'));
  stores = openSqliteStores(dir);
  nowMs = 1_700_000_000_000;
  sessions = new SessionRegistry();
  contexts = new ModelContexts();
  upstream = [];
  const provider = createModelProvider(models);
  router = new ProxyRouter({
    sessions,
    env: {
      stores,
      models: {
        ...provider,
        invoke: (req) => {
          upstream.push(req.messages);
          return provider.invoke(req);
        },
      },
      contexts,
      toolsFor: () => undefined,
      knowledge: { list: async () => [], retrieve: async () => [] },
      clock,
      limits: { stateValueBytes: 262_144, storageValueBytes: 1024 },
      warn: () => {},
    },
    audit: (run_id, entry) => stores.runs.addApiCall(run_id, entry),
    auditUnattributed: (entry) => stores.runs.addUnattributedCall(entry),
    runnerOf: (run_id) => stores.runs.get(run_id)?.runner_id ?? null,
  });
});

afterEach(async () => {
  stores.close();
  await rm(dir, { recursive: true, force: true });
});

/** Registers a live run of plugin `acme/<plugin>` in conversation `conversation`. */
function start(
  run_id: string,
  plugin: string,
  opts: { conversation?: string | null; deadline_at?: number | null; permissions?: Record<string, unknown> } = {},
): RunSession {
  const d = {
    ...descriptor({
      permissions: opts.permissions ?? { history: ['page'], events: ['get'], artifacts: ['metadata'], models: ['invoke'], storage: ['plugin'] },
    }),
    id: `plugin:acme/${plugin}/default`,
    plugin_name: plugin,
  };
  const b = binding({ runner_id: d.id, resource_policy: { allowed_model_uuids: ['m-fake'] } });
  const event = envelope({ event_id: `ev-${run_id}`, conversation_id: opts.conversation === undefined ? 'c1' : opts.conversation });
  const session = runSession(run_id, d, b, event, { plugin_identity: `acme/${plugin}`, deadline_at: opts.deadline_at ?? null, startedAt: nowMs / 1000 });
  stores.runs.create({
    run_id,
    runner_id: d.id,
    binding_id: b.binding_id,
    event_id: event.event_id,
    conversation_id: event.conversation_id,
    started_at: nowMs / 1000,
  });
  sessions.register(session);
  contexts.open(run_id);
  return session;
}

function call(plugin: string, method: string, params: Record<string, unknown>): Promise<unknown> {
  const c: ProxyCall = { caller_plugin: `acme/${plugin}`, method, params, signal: new AbortController().signal, notify: () => {} };
  return router.handle(c);
}

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected the call to be refused');
}

const audit = (run_id: string) => stores.runs.get(run_id)?.api_calls ?? [];

describe('proxy router', () => {
  it('refuses a live run id of another plugin and audits it on the caller, not on the victim (AC-029)', async () => {
    start('run-a', 'a');
    start('run-b', 'b');
    const err = await refusal(call('b', 'history.page', { run_id: 'run-a' }));
    expect([err.code, err.reason]).toEqual(['unauthorized', 'identity_mismatch']);
    expect(audit('run-a')).toEqual([]);
    expect(audit('run-b')).toEqual([
      expect.objectContaining({ action: 'history.page', decision: 'denied', code: 'unauthorized', caller_plugin: 'acme/b', as_run_id: 'run-a' }),
    ]);
    // run A is unaffected
    expect(await call('a', 'history.page', { run_id: 'run-a' })).toMatchObject({ items: [] });
  });

  it('refuses unknown and finished run ids (AC-027, AC-028)', async () => {
    start('run-a', 'a');
    expect((await refusal(call('a', 'state.get', { run_id: 'nope', scope: 'conversation', key: 'k' }))).reason).toBe('session_not_found');
    expect(audit('run-a')).toEqual([expect.objectContaining({ action: 'state.get', decision: 'denied', as_run_id: 'nope' })]);
    sessions.unregister('run-a');
    const late = await refusal(call('a', 'state.set', { run_id: 'run-a', scope: 'conversation', key: 'k', value: 1 }));
    expect([late.code, late.reason]).toEqual(['unauthorized', 'session_not_found']);
    expect(audit('run-a').at(-1)).toMatchObject({ action: 'state.set', decision: 'denied', code: 'unauthorized', resource: 'conversation:k' });
    // a finished run of another plugin is not attributed to it
    start('run-c', 'c');
    sessions.unregister('run-c');
    await refusal(call('b', 'state.get', { run_id: 'run-c', scope: 'conversation', key: 'k' }));
    expect(audit('run-c')).toEqual([]);
    // ... it is audited without a run, under the caller's plugin identity
    expect(stores.runs.unattributedCalls({ caller_plugin: 'acme/b' })).toEqual([
      expect.objectContaining({ action: 'state.get', decision: 'denied', code: 'unauthorized', as_run_id: 'run-c' }),
    ]);
  });

  it('audits unknown methods and calls no run can be named for (foreign or unknown run ids, no live run)', async () => {
    start('run-a', 'a');
    expect((await refusal(call('a', 'nope.method', { run_id: 'run-a' }))).reason).toBe('unknown_method');
    expect(audit('run-a')).toEqual([expect.objectContaining({ action: 'nope.method', decision: 'denied', code: 'invalid_argument', caller_plugin: 'acme/a' })]);
    expect((await refusal(call('z', 'history.page', { run_id: 'run-a' }))).reason).toBe('identity_mismatch');
    expect((await refusal(call('z', 'nope.method', {}))).reason).toBe('unknown_method');
    expect(audit('run-a')).toHaveLength(1);
    expect(stores.runs.unattributedCalls({ caller_plugin: 'acme/z' })).toEqual([
      expect.objectContaining({ action: 'history.page', decision: 'denied', code: 'unauthorized', caller_plugin: 'acme/z', as_run_id: 'run-a' }),
      expect.objectContaining({ action: 'nope.method', decision: 'denied', code: 'invalid_argument', caller_plugin: 'acme/z', as_run_id: '' }),
    ]);
  });

  it('refuses a call whose refusal cannot be recorded instead of answering it unrecorded', async () => {
    start('run-a', 'a');
    const failing = new ProxyRouter({
      sessions,
      env: {
        stores,
        models: createModelProvider(models),
        toolsFor: () => undefined,
        knowledge: { list: async () => [], retrieve: async () => [] },
        clock,
        limits: { stateValueBytes: 262_144, storageValueBytes: 1024 },
        warn: () => {},
      },
      audit: () => Promise.reject(new Error('disk full')),
      auditUnattributed: () => {
        throw new Error('disk full');
      },
      runnerOf: () => null,
    });
    const c = (plugin: string, params: Record<string, unknown>): ProxyCall => ({
      caller_plugin: plugin,
      method: 'history.page',
      params,
      signal: new AbortController().signal,
      notify: () => {},
    });
    // An allowed call is answered before its row commits (a failed write fails its run: host.ts); a refusal
    // waits for its row, so a refusal that cannot be recorded becomes audit_failed.
    expect(await failing.handle(c('acme/a', { run_id: 'run-a' }))).toMatchObject({ items: [] });
    for (const params of [{ run_id: 'run-a', before_cursor: 'x' }, { run_id: 'x' }]) {
      const err = await refusal(failing.handle(c(params.run_id === 'x' ? 'acme/z' : 'acme/a', params)));
      expect([err.code, err.reason]).toEqual(['runtime_error', 'audit_failed']);
    }
  });

  it('answers deadline_exceeded after deadline_at (AC-035)', async () => {
    start('run-a', 'a', { deadline_at: nowMs / 1000 + 2 });
    expect(await call('a', 'state.get', { run_id: 'run-a', scope: 'conversation', key: 'k' })).toEqual({ value: null });
    nowMs += 2500;
    const err = await refusal(call('a', 'state.get', { run_id: 'run-a', scope: 'conversation', key: 'k' }));
    expect([err.code, err.reason, err.retryable]).toEqual(['deadline_exceeded', 'run_deadline', false]);
    expect(audit('run-a').map((c) => [c.decision, c.code])).toEqual([
      ['allowed', null],
      ['denied', 'deadline_exceeded'],
    ]);
  });

  it('checks arguments, the method table, manifest permissions and resources', async () => {
    start('run-a', 'a', { permissions: { models: ['invoke'], storage: ['plugin'] } });
    expect((await refusal(call('a', 'state.get', { scope: 'conversation', key: 'k' }))).reason).toBe('missing_argument');
    expect((await refusal(call('a', 'shell.exec', { run_id: 'run-a' }))).reason).toBe('unknown_method');
    expect((await refusal(call('a', 'history.page', { run_id: 'run-a' }))).reason).toBe('permission_denied');
    expect((await refusal(call('a', 'models.invoke', { run_id: 'run-a', model_id: 'm-other', messages: [] }))).reason).toBe('resource_not_authorized');
    expect((await refusal(call('a', 'storage.get', { run_id: 'run-a', area: 'workspace', key: 'k' }))).reason).toBe('resource_not_authorized');
    expect(await call('a', 'models.invoke', { run_id: 'run-a', model_id: 'm-fake', messages: [{ role: 'user', content: 'hi' }] })).toMatchObject({
      message: { content: 'FAKE_PONG' },
    });
    const calls = audit('run-a');
    expect(calls).toHaveLength(6);
    expect(calls.at(-1)).toMatchObject({ action: 'models.invoke', resource: 'm-fake', decision: 'allowed', code: null });
    expect(calls.at(-3)).toMatchObject({ action: 'models.invoke', resource: 'm-other', decision: 'denied', code: 'unauthorized' });
  });

  it('a model call continues a context of its own run with only the new messages; foreign, unknown and ended contexts are refused', async () => {
    start('run-a', 'a');
    start('run-b', 'b');
    const user = { role: 'user', content: 'hi' };
    const first = (await call('a', 'models.invoke', { run_id: 'run-a', model_id: 'm-fake', messages: [user], keep_context: true })) as { context_id?: string };
    expect(first.context_id).toMatch(/^[0-9a-f-]{36}$/);
    const added = [
      { role: 'assistant', content: 'FAKE_PONG' },
      { role: 'user', content: 'again' },
    ];
    const second = (await call('a', 'models.invoke', { run_id: 'run-a', model_id: 'm-fake', messages: added, context_id: first.context_id })) as {
      context_id?: string;
    };
    // The provider saw the whole conversation; a continued context answers the next one.
    expect(upstream.at(-1)).toEqual([user, ...added]);
    expect(second.context_id).toBeDefined();
    expect(second.context_id).not.toBe(first.context_id);
    // A call without either gets no context.
    expect(await call('a', 'models.invoke', { run_id: 'run-a', model_id: 'm-fake', messages: [user] })).not.toHaveProperty('context_id');

    // Another plugin's run cannot read run-a's conversation through its context id.
    const foreign = await refusal(call('b', 'models.invoke', { run_id: 'run-b', model_id: 'm-fake', messages: [], context_id: first.context_id }));
    expect([foreign.code, foreign.reason]).toEqual(['invalid_argument', 'context_unknown']);
    expect((await refusal(call('a', 'models.invoke', { run_id: 'run-a', model_id: 'm-fake', messages: [], context_id: 'made-up' }))).reason).toBe(
      'context_unknown',
    );
    // The delta is checked like a whole list.
    expect(
      (await refusal(call('a', 'models.invoke', { run_id: 'run-a', model_id: 'm-fake', messages: [{ content: 'no role' }], context_id: second.context_id })))
        .code,
    ).toBe('invalid_argument');
    expect(audit('run-b').at(-1)).toMatchObject({ action: 'models.invoke', decision: 'denied', code: 'invalid_argument' });

    contexts.drop('run-a');
    expect((await refusal(call('a', 'models.invoke', { run_id: 'run-a', model_id: 'm-fake', messages: [], context_id: second.context_id }))).reason).toBe(
      'context_unknown',
    );
  });

  it('makes out-of-scope events look exactly like missing ones (AC-032)', async () => {
    start('run-x', 'a', { conversation: 'c2' });
    stores.events.append({
      event_id: 'ev-x',
      event_type: 'message.received',
      event_time: null,
      source: 'api',
      bot_id: null,
      workspace_id: null,
      conversation_id: 'c2',
      thread_id: null,
      actor_type: null,
      actor_id: null,
      actor_name: null,
      subject_type: null,
      subject_id: null,
      input_text: 'x',
      input_json: {},
      raw_ref: null,
      run_id: 'run-x',
      runner_id: 'plugin:acme/a/default',
      metadata: {},
    });
    start('run-a', 'a');
    expect(await call('a', 'events.get', { run_id: 'run-x', event_id: 'ev-x' })).toMatchObject({ event_id: 'ev-x' });
    const hidden = (await refusal(call('a', 'events.get', { run_id: 'run-a', event_id: 'ev-x' }))).toWire();
    const missing = (await refusal(call('a', 'events.get', { run_id: 'run-a', event_id: 'ev-zz' }))).toWire();
    expect(JSON.stringify(hidden).replaceAll('ev-x', '<id>')).toBe(JSON.stringify(missing).replaceAll('ev-zz', '<id>'));
  });

  it('keeps the history of a run without conversation empty, and refuses naming one', async () => {
    start('run-a', 'a', { conversation: null });
    expect(await call('a', 'history.page', { run_id: 'run-a' })).toMatchObject({ items: [], has_more: false });
    expect((await refusal(call('a', 'history.page', { run_id: 'run-a', conversation_id: 'c1' }))).code).toBe('unauthorized');
  });
});
