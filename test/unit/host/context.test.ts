// Deadline, state scope keys, adapter params and the event-first context builder (runner-protocol.md §4).
import { describe, expect, it } from 'vitest';
import { filterAdapterParams } from '../../../src/core/host/adapter-params.js';
import { applyDeliveryPolicy, availableApis, buildRunContext } from '../../../src/core/host/context-builder.js';
import { computeDeadline, DEFAULT_RUN_TIMEOUT_S } from '../../../src/core/host/deadline.js';
import { buildResources } from '../../../src/core/host/resources.js';
import { aliasStateKey, buildScopeKeys } from '../../../src/core/host/state-scope.js';
import { decodeScopeKey, migrateLegacyScopeKey } from '../../../src/core/stores/state-scope-key.js';
import { binding, descriptor, envelope, RUNNER_ID } from './fixtures.js';

const NOW_MS = 1_700_000_000_000;

describe('computeDeadline (AC-005)', () => {
  it('defaults to 300 s and follows numeric timeouts', () => {
    expect(DEFAULT_RUN_TIMEOUT_S).toBe(300);
    expect(computeDeadline({}, NOW_MS)).toBe(NOW_MS / 1000 + 300);
    expect(computeDeadline({ timeout: 5 }, NOW_MS)).toBe(NOW_MS / 1000 + 5);
    expect(computeDeadline({ timeout: 0.5 }, NOW_MS)).toBe(NOW_MS / 1000 + 0.5);
    expect(computeDeadline({ timeout: '7' }, NOW_MS)).toBe(NOW_MS / 1000 + 7);
  });

  it('disables the deadline for null, zero, negative and non-numeric values', () => {
    for (const timeout of [null, 0, -3, 'abc', '', Number.NaN, Number.POSITIVE_INFINITY])
      expect(computeDeadline({ timeout }, NOW_MS), String(timeout)).toBeNull();
  });
});

describe('state scope keys (§8.5)', () => {
  it('builds one key per scope the event has an identity for', () => {
    const R = 'plugin%3Aacme/scripted/default';
    expect(buildScopeKeys(RUNNER_ID, 'b1', envelope())).toEqual({
      runner: `runner:${R}:b1`,
      conversation: `conversation:${R}:b1:c1`,
      actor: `actor:${R}:b1:user:u1`,
      subject: `subject:${R}:b1:message:m1`,
    });
  });

  it('includes the thread, and leaves out scopes without identity', () => {
    const keys = buildScopeKeys(RUNNER_ID, 'b1', envelope({ thread_id: 't9', actor: null, subject: null }));
    expect(keys.conversation).toBe(`conversation:plugin%3Aacme/scripted/default:b1:c1:t9`);
    expect(keys.actor).toBeUndefined();
    expect(keys.subject).toBeUndefined();
    expect(buildScopeKeys(RUNNER_ID, 'b1', envelope({ conversation_id: null })).conversation).toBeUndefined();
  });

  it('keeps runners and bindings apart (AC-050) and follows the actor across conversations (AC-051)', () => {
    const a = buildScopeKeys(RUNNER_ID, 'b1', envelope());
    expect(buildScopeKeys(RUNNER_ID, 'b2', envelope()).conversation).not.toBe(a.conversation);
    expect(buildScopeKeys('plugin:acme/other/default', 'b1', envelope()).conversation).not.toBe(a.conversation);
    expect(buildScopeKeys(RUNNER_ID, 'b1', envelope({ conversation_id: 'c2' })).actor).toBe(a.actor);
  });

  it('escapes the parts: conversation "a" thread "b" and conversation "a:b" get different keys', () => {
    const threaded = buildScopeKeys(RUNNER_ID, 'b1', envelope({ conversation_id: 'a', thread_id: 'b' })).conversation;
    const colon = buildScopeKeys(RUNNER_ID, 'b1', envelope({ conversation_id: 'a:b', thread_id: null })).conversation;
    expect(threaded).toBe('conversation:plugin%3Aacme/scripted/default:b1:a:b');
    expect(colon).toBe('conversation:plugin%3Aacme/scripted/default:b1:a%3Ab');
    expect(buildScopeKeys(RUNNER_ID, 'b:1', envelope()).runner).not.toBe(buildScopeKeys(RUNNER_ID, 'b%3A1', envelope()).runner);
    expect(decodeScopeKey(colon ?? '')).toEqual({ scope: 'conversation', parts: [RUNNER_ID, 'b1', 'a:b'] });
    expect(decodeScopeKey(threaded ?? '')).toEqual({ scope: 'conversation', parts: [RUNNER_ID, 'b1', 'a', 'b'] });
    expect(decodeScopeKey(buildScopeKeys(RUNNER_ID, 'b%3A1', envelope()).runner ?? '')?.parts).toEqual([RUNNER_ID, 'b%3A1']);
  });

  it('reads keys written before schema version 3: by the row identity, else only when unambiguous', () => {
    const id = {
      runner_id: RUNNER_ID,
      binding_identity: 'b1',
      conversation_id: 'onebot:group:1',
      thread_id: null,
      actor_type: null,
      actor_id: null,
      subject_type: null,
      subject_id: null,
    };
    const old = `conversation:${RUNNER_ID}:b1:onebot:group:1`;
    expect(migrateLegacyScopeKey('conversation', old, id)).toBe('conversation:plugin%3Aacme/scripted/default:b1:onebot%3Agroup%3A1');
    const none = { ...id, runner_id: 'x', binding_identity: 'x', conversation_id: null };
    expect(migrateLegacyScopeKey('conversation', old, none)).toBeNull();
    expect(migrateLegacyScopeKey('runner', `runner:${RUNNER_ID}:b1`, none)).toBe('runner:plugin%3Aacme/scripted/default:b1');
    expect(migrateLegacyScopeKey('runner', `runner:${RUNNER_ID}:pipeline:b1`, none)).toBeNull();
    expect(migrateLegacyScopeKey('runner', `runner:${RUNNER_ID}:pipeline:b1`, { ...id, binding_identity: 'pipeline:b1' })).toBe(
      'runner:plugin%3Aacme/scripted/default:pipeline%3Ab1',
    );
    expect(migrateLegacyScopeKey('actor', `actor:${RUNNER_ID}:b1:user:u1`, none)).toBe('actor:plugin%3Aacme/scripted/default:b1:user:u1');
    expect(migrateLegacyScopeKey('actor', `actor:${RUNNER_ID}:b1:user:u:1`, none)).toBeNull();
    expect(migrateLegacyScopeKey('conversation', `runner:${RUNNER_ID}:b1`, id)).toBeNull();
  });

  it('aliases conversation_id and nothing else (AC-047)', () => {
    expect(aliasStateKey('conversation_id')).toBe('external.conversation_id');
    expect(aliasStateKey('external.conversation_id')).toBe('external.conversation_id');
    expect(aliasStateKey('session_id')).toBe('session_id');
  });
});

describe('filterAdapterParams (AC-210)', () => {
  it('drops underscore-prefixed and secret-looking names, case-insensitively', () => {
    const params = {
      topic: 'x',
      api_key: 'k',
      _internal: '1',
      DB_PASSWORD: 'p',
      user_token: 't',
      Credential_Id: 'c',
      secretive: 's',
      ApiKey: 'a',
      monkey: 'm',
    };
    expect(filterAdapterParams(params)).toEqual({ topic: 'x' });
  });

  it('drops values that are not JSON', () => {
    expect(filterAdapterParams({ ok: [1, { a: 'b' }], fn: () => 1, nan: Number.NaN, big: 10n })).toEqual({ ok: [1, { a: 'b' }] });
  });
});

describe('context builder', () => {
  const d = descriptor({ permissions: { history: ['page', 'search'], events: ['get', 'page'], artifacts: ['metadata', 'read'], storage: ['plugin'] } });
  const b = binding();
  const resources = buildResources(d, b, {}, { models: [], knowledgeBases: [], tools: [] }, () => {});
  const state = { conversation: { mood: 'happy' }, actor: {}, subject: {}, runner: {} };
  const build = (over: Partial<Parameters<typeof buildRunContext>[0]> = {}) =>
    buildRunContext({
      run_id: 'run-1',
      event: envelope(),
      binding: b,
      descriptor: d,
      config: { script: [] },
      resources,
      state,
      latestSeq: 41,
      deadline_at: 123.5,
      nowMs: NOW_MS,
      hostVersion: '9.9.9',
      adapterParams: null,
      ...over,
    });

  it('is event-first: trigger, event, input and no inlined history (AC-004, AC-007)', () => {
    const ctx = build();
    expect(ctx.run_id).toBe('run-1');
    expect(ctx.trigger).toEqual({ type: 'message.received', source: 'api', timestamp: NOW_MS / 1000 });
    expect(ctx.event).toMatchObject({ event_id: 'ev-1', event_type: 'message.received', source: 'api' });
    expect(ctx.input.text).toBe('ping');
    expect(ctx.bootstrap).toBeNull();
    expect(ctx.adapter).toEqual({ query_id: null, pipeline_uuid: null, extra: {} });
    expect(ctx.metadata).toEqual({});
    expect(ctx.config).toEqual({ script: [] });
    expect(ctx.state).toBe(state);
  });

  it('fills the runtime block from the run and the descriptor', () => {
    expect(build().runtime).toMatchObject({
      trace_id: 'run-1',
      deadline_at: 123.5,
      sdk_protocol_version: '1',
      langbot_version: '9.9.9',
      query_id: null,
      metadata: { streaming_supported: true, model_context_window_tokens: null },
    });
    expect(build({ event: envelope({ event_time: 1234 }) }).trigger.timestamp).toBe(1234);
  });

  it('references history through cursors (§4.6)', () => {
    expect(build().context).toMatchObject({
      latest_cursor: '41',
      transcript_seq: 41,
      has_history_before: true,
      event_seq: null,
      inline_policy: { mode: 'current_event', delivered_count: 0 },
    });
    expect(build({ latestSeq: null }).context).toMatchObject({ latest_cursor: null, transcript_seq: null, has_history_before: false });
  });

  it('has no conversation block, cursor or history APIs for events without a conversation (AC-006, AC-010)', () => {
    const ctx = build({ event: envelope({ conversation_id: null }) });
    expect(ctx.conversation).toBeNull();
    expect(ctx.context.latest_cursor).toBeNull();
    expect(ctx.context.available_apis).toMatchObject({ history_page: false, history_search: false, event_get: true, event_page: false });
  });

  it('carries the filtered adapter params', () => {
    expect(build({ adapterParams: { topic: 'x' } }).adapter.extra).toEqual({ params: { topic: 'x' } });
  });

  it('derives available_apis from permissions, state policy and storage', () => {
    expect(availableApis(d, b, resources, 'c1')).toEqual({
      history_page: true,
      history_search: true,
      event_get: true,
      event_page: true,
      artifact_metadata: true,
      artifact_read: true,
      state: true,
      storage: true,
      prompt_get: false,
    });
    const bare = descriptor();
    const noStorage = buildResources(bare, b, {}, { models: [], knowledgeBases: [], tools: [] }, () => {});
    expect(availableApis(bare, binding({ state_policy: { enable_state: false } }), noStorage, 'c1')).toMatchObject({
      history_page: false,
      state: false,
      storage: false,
      artifact_read: false,
    });
    expect(availableApis(bare, binding({ state_policy: { state_scopes: [] } }), noStorage, 'c1').state).toBe(false);
  });

  it('narrows delivery by the binding policy (AC-083)', () => {
    const delivery = envelope().delivery;
    expect(applyDeliveryPolicy(delivery, binding({ delivery_policy: { enable_streaming: false } })).supports_streaming).toBe(false);
    expect(applyDeliveryPolicy({ ...delivery, supports_streaming: false }, b).supports_streaming).toBe(false);
    expect(applyDeliveryPolicy({ ...delivery, max_message_size: 500 }, binding({ delivery_policy: { max_message_size: 200 } })).max_message_size).toBe(200);
    const ctx = build({ binding: binding({ delivery_policy: { enable_streaming: false } }) });
    expect(ctx.delivery.supports_streaming).toBe(false);
    expect(ctx.runtime.metadata.streaming_supported).toBe(false);
  });
});
