// parseScopeKey reads back exactly what buildScopeKeys wrote, and refuses anything else.
import { describe, expect, it } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import { buildScopeKeys, parseScopeKey } from '../../../src/core/host/state-scope.js';
import { encodeScopeKey } from '../../../src/core/stores/state-scope-key.js';
import { createTestContext } from '../../../src/sdk/testing.js';

const RUNNER = 'plugin:acme/scripted/default';

describe('parseScopeKey', () => {
  it('inverts buildScopeKeys for every scope, ids with colons included', () => {
    const event = {
      ...createTestContext().event,
      conversation_id: 'onebot:group:1',
      thread_id: 't:1',
      actor: { actor_type: 'user', actor_id: 'u:9', actor_name: null, metadata: {} },
      subject: { subject_type: 'doc', subject_id: 's:2', metadata: {} },
    };
    const keys = buildScopeKeys(RUNNER, 'b:1', event);
    const base = { runner_id: RUNNER, binding_identity: 'b:1' };
    const none = { conversation_id: null, thread_id: null, actor_type: null, actor_id: null, subject_type: null, subject_id: null };
    expect(parseScopeKey(keys.runner ?? '')).toEqual({ scope: 'runner', identity: { ...base, ...none } });
    expect(parseScopeKey(keys.conversation ?? '')).toEqual({
      scope: 'conversation',
      identity: { ...base, ...none, conversation_id: 'onebot:group:1', thread_id: 't:1' },
    });
    expect(parseScopeKey(keys.actor ?? '')).toEqual({ scope: 'actor', identity: { ...base, ...none, actor_type: 'user', actor_id: 'u:9' } });
    expect(parseScopeKey(keys.subject ?? '')).toEqual({ scope: 'subject', identity: { ...base, ...none, subject_type: 'doc', subject_id: 's:2' } });
  });

  it.each([
    ['not a key', 'hello'],
    ['unknown scope', encodeScopeKey('runner', [RUNNER, 'b']).replace(/^runner/, 'global')],
    ['not a runner id', encodeScopeKey('runner', ['acme', 'b'])],
    ['runner key with extra parts', encodeScopeKey('runner', [RUNNER, 'b', 'x'])],
    ['conversation key without its id', encodeScopeKey('conversation', [RUNNER, 'b'])],
    ['actor key without its id', encodeScopeKey('actor', [RUNNER, 'b', 'user'])],
    ['subject key with too many parts', encodeScopeKey('subject', [RUNNER, 'b', 'doc', 's', 'x'])],
    ['bad escape', `runner:${RUNNER}:b%zz`],
  ])('refuses %s as invalid_argument', (_name, key) => {
    let caught: unknown;
    try {
      parseScopeKey(key);
    } catch (err) {
      caught = err;
    }
    expect(caught instanceof LbotError && caught.code).toBe('invalid_argument');
  });
});
