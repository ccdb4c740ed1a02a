// Naming a state scope by conversation or actor instead of its raw scope key.
import { describe, expect, it } from 'vitest';
import { resolveScopeKey, scopeKeyMatches } from '../../../src/core/host/state-target.js';
import { encodeScopeKey } from '../../../src/core/stores/state-scope-key.js';

const R = 'plugin:acme/echo/default';
const conv = (runner: string, binding: string, c: string) => encodeScopeKey('conversation', [runner, binding, c]);
const actor = (runner: string, binding: string, id: string) => encodeScopeKey('actor', [runner, binding, 'user', id]);

describe('state targets', () => {
  const known = [conv(R, 'b1', 'c1'), conv(R, 'b2', 'c2'), conv('plugin:acme/other/default', 'b2', 'c2'), actor(R, 'b1', 'u:1')];

  it('finds the one scope key of a conversation or an actor', () => {
    expect(resolveScopeKey({ conversation: 'c1' }, known, false)).toBe(known[0]);
    expect(resolveScopeKey({ actor: 'u:1' }, known, false)).toBe(known[3]);
    expect(scopeKeyMatches(known[3] ?? '', { actor: 'u:1', actorType: 'bot' })).toBe(false);
  });

  it('asks for --runner / --binding when several keep state there, and narrows with them', () => {
    expect(() => resolveScopeKey({ conversation: 'c2' }, known, false)).toThrow(/has state under 2 scopes/);
    expect(resolveScopeKey({ conversation: 'c2', runner: R }, known, false)).toBe(known[1]);
  });

  it('refuses no scope or two, builds a new one for set only with runner and binding, and passes a raw key through', () => {
    expect(() => resolveScopeKey({}, known, false)).toThrow(/one of --conversation/);
    expect(() => resolveScopeKey({ conversation: 'c1', actor: 'u' }, known, false)).toThrow(/one of --conversation/);
    expect(() => resolveScopeKey({ conversation: 'c9' }, known, true)).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(resolveScopeKey({ conversation: 'c9', runner: R, binding: 'b1' }, known, true)).toBe(conv(R, 'b1', 'c9'));
    expect(resolveScopeKey({ actor: 'u2', runner: R, binding: 'b1' }, known, true)).toBe(actor(R, 'b1', 'u2'));
    expect(resolveScopeKey({ scopeKey: known[0] }, [], false)).toBe(known[0]);
    expect(() => resolveScopeKey({ scopeKey: 'garbage' }, [], false)).toThrow(/not a state scope key/);
  });
});
