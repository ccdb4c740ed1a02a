import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/core/config.js';
import { allowedValues, resolveKey, setAt, unsetAt, valueAt } from '../../../src/core/config-keys.js';
import { LbotError } from '../../../src/core/errors.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof LbotError ? err.code : 'not an LbotError';
  }
  return undefined;
}

describe('config keys', () => {
  it('resolves fields, records and list elements against the schema', () => {
    expect(resolveKey('box.limits').steps).toEqual([
      { kind: 'field', name: 'box' },
      { kind: 'field', name: 'limits' },
    ]);
    expect(resolveKey('runner_aliases.my-agent').steps.at(-1)).toEqual({ kind: 'field', name: 'my-agent' });
    expect(resolveKey('mcp.servers.fs.url').steps[2]).toEqual({ kind: 'element', selector: 'fs' });
    expect(allowedValues(resolveKey('plugins.isolation').schema)).toBe('one of auto, sandbox, none');
    expect(allowedValues(resolveKey('plugins.limits.memory_mb').schema)).toBe('a number');
    expect(resolveKey('langbot.python').steps).toEqual([
      { kind: 'field', name: 'langbot' },
      { kind: 'field', name: 'python' },
    ]);
  });

  it.each(['serve', 'runs'] as const)('bounds %s.commit_window_ms: 5 by default, a whole number of ms from 0 to 1000', (section) => {
    expect(ConfigSchema.parse({})[section].commit_window_ms).toBe(5);
    for (const ok of [0, 1000]) expect(ConfigSchema.parse({ [section]: { commit_window_ms: ok } })[section].commit_window_ms).toBe(ok);
    for (const bad of [-1, 1.5, 1001, '5', null]) expect(ConfigSchema.safeParse({ [section]: { commit_window_ms: bad } }).success).toBe(false);
  });

  it('refuses a typo naming the closest key and the keys that exist', () => {
    const err = (() => {
      try {
        resolveKey('box.limts');
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(LbotError);
    expect(err).toMatchObject({ code: 'invalid_argument', hint: expect.stringMatching(/^did you mean box\.limits\? keys under box: .*limits/) });
  });

  it('refuses keys that could reach the prototype, empty segments and keys below a single value', () => {
    for (const key of ['toString', 'box.hasOwnProperty', '__proto__.x', 'runner_aliases.__proto__', 'box..limits', '', 'plugins.isolation.deeper'])
      expect(
        codeOf(() => resolveKey(key)),
        key,
      ).toBe('invalid_argument');
  });

  it('sets, reads and unsets in a raw file object, creating objects on the way', () => {
    const raw: Record<string, unknown> = {};
    setAt(raw, resolveKey('plugins.limits.memory_mb').steps, 'plugins.limits.memory_mb', 2048);
    expect(raw).toEqual({ plugins: { limits: { memory_mb: 2048 } } });
    expect(valueAt(raw, resolveKey('plugins.limits.memory_mb').steps)).toBe(2048);
    expect(unsetAt(raw, resolveKey('plugins.limits.memory_mb').steps)).toBe(true);
    expect(unsetAt(raw, resolveKey('plugins.limits.memory_mb').steps)).toBe(false);
    expect(raw).toEqual({ plugins: { limits: {} } });
  });

  it('finds list elements by position or name, and never invents one', () => {
    const raw: Record<string, unknown> = { mcp: { servers: [{ name: 'fs', url: 'a' }, { name: 'web' }] } };
    const key = 'mcp.servers.web.url';
    setAt(raw, resolveKey(key).steps, key, 'http://x');
    expect(valueAt(raw, resolveKey('mcp.servers.1.url').steps)).toBe('http://x');
    expect(codeOf(() => setAt(raw, resolveKey('mcp.servers.nope.url').steps, 'mcp.servers.nope.url', 'y'))).toBe('not_found');
    expect(codeOf(() => setAt(raw, resolveKey('mcp.servers.7.url').steps, 'mcp.servers.7.url', 'y'))).toBe('not_found');
    expect(unsetAt(raw, resolveKey('mcp.servers.fs').steps)).toBe(true);
    expect(raw).toEqual({ mcp: { servers: [{ name: 'web', url: 'http://x' }] } });
  });
});
