// Binding resolution (runner-protocol.md §3.4) and the legacy binding importer (§2.9, AC-182).
import { describe, expect, it } from 'vitest';
import { resolveBindings } from '../../../src/core/host/binding-resolver.js';
import { migrateLegacyConfig } from '../../../src/core/host/legacy-binding.js';
import { LbotError } from '../../../src/core/errors.js';
import { binding, envelope } from './fixtures.js';

const ids = (bs: ReturnType<typeof resolveBindings>) => bs.map((b) => b.binding_id);

describe('resolveBindings', () => {
  it('keeps enabled bindings for the event type (or *)', () => {
    const bs = [
      binding({ binding_id: 'msg' }),
      binding({ binding_id: 'join', event_types: ['group.member_joined'] }),
      binding({ binding_id: 'off', enabled: false }),
      binding({ binding_id: 'any', event_types: ['*'] }),
    ];
    expect(ids(resolveBindings(envelope(), bs))).toEqual(['any', 'msg']);
    expect(ids(resolveBindings(envelope({ event_type: 'group.member_joined' }), bs))).toEqual(['any', 'join']);
    expect(resolveBindings(envelope({ event_type: 'friend.request_received' }), [bs[0]!])).toEqual([]);
  });

  it('matches scopes and orders pipeline > bot > workspace > global, then priority, then id', () => {
    const e = envelope({ bot_id: 'bot-1', workspace_id: 'ws-1' });
    const bs = [
      binding({ binding_id: 'g-b', scope: { scope_type: 'global' } }),
      binding({ binding_id: 'g-a', scope: { scope_type: 'global' } }),
      binding({ binding_id: 'g-hi', scope: { scope_type: 'global' }, priority: 5 }),
      binding({ binding_id: 'ws', scope: { scope_type: 'workspace', scope_id: 'ws-1' } }),
      binding({ binding_id: 'ws-other', scope: { scope_type: 'workspace', scope_id: 'ws-2' } }),
      binding({ binding_id: 'bot', scope: { scope_type: 'bot', scope_id: 'bot-1' } }),
      binding({ binding_id: 'pipe', scope: { scope_type: 'pipeline', scope_id: 'route-1' } }),
    ];
    expect(ids(resolveBindings(e, bs))).toEqual(['bot', 'ws', 'g-hi', 'g-a', 'g-b']);
    expect(ids(resolveBindings(e, bs, 'route-1'))[0]).toBe('pipe');
  });

  it('requires every filter to match', () => {
    const b = binding({
      binding_id: 'f',
      filters: [
        { field: 'actor.actor_id', operator: 'in', value: ['u1', 'u2'] },
        { field: 'conversation_id', operator: 'prefix', value: 'c' },
        { field: 'source', operator: 'neq', value: 'platform' },
      ],
    });
    expect(ids(resolveBindings(envelope(), [b]))).toEqual(['f']);
    expect(resolveBindings(envelope({ actor: { actor_type: 'user', actor_id: 'u9' } }), [b])).toEqual([]);
    expect(resolveBindings(envelope({ conversation_id: 'g1' }), [b])).toEqual([]);
    expect(resolveBindings(envelope({ source: 'platform' }), [b])).toEqual([]);
  });
});

describe('migrateLegacyConfig', () => {
  it('imports a legacy local-agent block (AC-182)', () => {
    const input = { ai: { runner: { runner: 'local-agent', 'expire-time': 0 }, 'local-agent': { 'knowledge-base': 'kb1', 'max-round': 10, model: 'm1' } } };
    const copy = structuredClone(input);
    const b = migrateLegacyConfig(input, 'old');
    expect(b).toMatchObject({ binding_id: 'old', runner_id: 'plugin:langbot/local-agent/default', runner_config: { 'knowledge-bases': ['kb1'], model: 'm1' } });
    expect(b.runner_config).not.toHaveProperty('max-round');
    expect(b.runner_config).not.toHaveProperty('knowledge-base');
    expect(input).toEqual(copy);
  });

  it('turns a sentinel or non-string knowledge-base into an empty list and keeps an existing list', () => {
    const run = (kb: unknown, extra: Record<string, unknown> = {}) =>
      migrateLegacyConfig({ ai: { runner: { runner: 'local-agent' }, 'local-agent': { 'knowledge-base': kb, ...extra } } }, 'b').runner_config;
    expect(run('__none__')).toEqual({ 'knowledge-bases': [] });
    expect(run(42)).toEqual({ 'knowledge-bases': [] });
    expect(run('kb1', { 'knowledge-bases': ['kb2'] })).toEqual({ 'knowledge-bases': ['kb2'] });
  });

  it('prefers ai.runner.id and ai.runner_config over legacy blocks', () => {
    const b = migrateLegacyConfig(
      { ai: { runner: { id: 'plugin:acme/x/default' }, runner_config: { 'plugin:acme/x/default': { a: 1 } }, 'local-agent': { b: 2 } } },
      'b',
    );
    expect(b).toMatchObject({ runner_id: 'plugin:acme/x/default', runner_config: { a: 1 } });
    expect(migrateLegacyConfig({ ai: { runner: { id: 'dify-service-api' } } }, 'b').runner_id).toBe('plugin:langbot/dify-agent/default');
    expect(migrateLegacyConfig({ ai: { runner: { runner: 'custom-thing' } } }, 'b').runner_id).toBe('custom-thing');
  });

  it('refuses a config without a runner', () => {
    expect(() => migrateLegacyConfig({}, 'b')).toThrow(LbotError);
    expect(() => migrateLegacyConfig({ ai: { runner: {} } }, 'b')).toThrow(/names no runner/);
  });
});
