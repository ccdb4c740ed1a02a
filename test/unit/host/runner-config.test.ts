// Binding config against the runner's config schema (runner-protocol.md §2.7–§2.8).
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/core/host/api-error.js';
import { isSentinel, knowledgeBaseRefs, modelRefs, normalizeRunnerConfig } from '../../../src/core/host/runner-config.js';
import { ConfigItemSchema, type ConfigItem } from '../../../src/core/protocol/manifest.js';
import { thrown } from '../../helpers/thrown.js';

const schema = (...items: unknown[]): ConfigItem[] => items.map((i) => ConfigItemSchema.parse(i));

const configError = (fn: () => unknown): ApiError => thrown(fn, ApiError);

describe('normalizeRunnerConfig', () => {
  it('applies defaults only to absent keys and keeps undeclared keys', () => {
    const items = schema({ name: 'temperature', type: 'float', default: 0.5 }, { name: 'topic', type: 'string', default: 'x' });
    expect(normalizeRunnerConfig(items, { topic: 'y', timeout: 5, custom: { a: 1 } })).toEqual({ temperature: 0.5, topic: 'y', timeout: 5, custom: { a: 1 } });
  });

  it('does not mutate the stored config or share the defaults', () => {
    const def = [{ role: 'system', content: 'be brief' }];
    const items = schema({ name: 'prompt', type: 'prompt-editor', default: def });
    const stored = { nested: { n: 1 } };
    const out = normalizeRunnerConfig(items, stored);
    expect(out.prompt).toEqual(def);
    expect(out.prompt).not.toBe(def);
    (out.nested as { n: number }).n = 2;
    expect(stored.nested.n).toBe(1);
  });

  it('treats the none sentinels in selectors as absent', () => {
    for (const s of ['', '__none__', '__none']) expect(isSentinel(s)).toBe(true);
    expect(isSentinel('m-fake')).toBe(false);
    const items = schema({ name: 'model', type: 'llm-model-selector' }, { name: 'kbs', type: 'knowledge-base-multi-selector' });
    expect(normalizeRunnerConfig(items, { model: '__none__', kbs: ['kb1', '__none__', ''] })).toEqual({ kbs: ['kb1'] });
  });

  it('normalizes fallback selectors, including the legacy plain string', () => {
    const items = schema({ name: 'model', type: 'model-fallback-selector' });
    expect(normalizeRunnerConfig(items, { model: 'm-fake' })).toEqual({ model: { primary: 'm-fake', fallbacks: [] } });
    expect(normalizeRunnerConfig(items, { model: { primary: 'm-fake', fallbacks: ['m-other', '__none__', 3] } })).toEqual({
      model: { primary: 'm-fake', fallbacks: ['m-other'] },
    });
    expect(normalizeRunnerConfig(items, { model: { fallbacks: ['m-other'] } })).toEqual({ model: { primary: '', fallbacks: ['m-other'] } });
  });

  it('resolves type aliases (number, json, select-llm-model, select-knowledge-bases)', () => {
    const items = schema(
      { name: 'n', type: 'number' },
      { name: 'j', type: 'json' },
      { name: 'm', type: 'select-llm-model' },
      { name: 'k', type: 'select-knowledge-bases' },
    );
    expect(normalizeRunnerConfig(items, { n: 1.5, j: '{}', m: 'm-fake', k: ['kb1'] })).toEqual({ n: 1.5, j: '{}', m: 'm-fake', k: ['kb1'] });
    expect(configError(() => normalizeRunnerConfig(items, { n: 'x' })).reason).toBe('config_invalid');
  });

  it('type-checks present values and names the key', () => {
    const cases: Array<[unknown, unknown]> = [
      [{ name: 'i', type: 'integer' }, 1.5],
      [{ name: 'i', type: 'boolean' }, 'yes'],
      [{ name: 'i', type: 'string' }, 3],
      [{ name: 'i', type: 'array[string]' }, 'a'],
      [{ name: 'i', type: 'llm-model-selector' }, 42],
    ];
    for (const [item, value] of cases) {
      const err = configError(() => normalizeRunnerConfig(schema(item), { i: value }));
      expect(err.code).toBe('invalid_argument');
      expect(err.message).toContain('"i"');
    }
  });

  it('reports a missing, empty or sentinel-only required item as config_invalid', () => {
    const items = schema({ name: 'model', type: 'llm-model-selector', required: true });
    for (const value of [undefined, '', '__none__']) {
      const err = configError(() => normalizeRunnerConfig(items, value === undefined ? {} : { model: value }));
      expect(err.reason).toBe('config_invalid');
      expect(err.message).toContain('model');
    }
    expect(configError(() => normalizeRunnerConfig(schema({ name: 'list', type: 'array[string]', required: true }), { list: [] })).reason).toBe(
      'config_invalid',
    );
    expect(normalizeRunnerConfig(items, { model: 'm-fake' })).toEqual({ model: 'm-fake' });
  });

  it('never stores display-only items or __system. names, and passes unknown types through', () => {
    const items = schema(
      { name: 'hook', type: 'webhook-url', default: 'https://x' },
      { name: '__system.id', type: 'string', default: 's' },
      { name: 'future', type: 'hologram-picker', default: { z: 1 } },
    );
    expect(normalizeRunnerConfig(items, {})).toEqual({ future: { z: 1 } });
  });

  it('replaces a non-array prompt-editor value with the empty system prompt', () => {
    expect(normalizeRunnerConfig(schema({ name: 'p', type: 'prompt-editor' }), { p: 'text' })).toEqual({ p: [{ role: 'system', content: '' }] });
  });
});

describe('modelRefs and knowledgeBaseRefs', () => {
  it('lists model references in schema order with their kind', () => {
    const items = schema(
      { name: 'rr', type: 'rerank-model-selector' },
      { name: 'model', type: 'model-fallback-selector' },
      { name: 'alt', type: 'llm-model-selector' },
      { name: 'emb', type: 'embedding-model-selector' },
    );
    const config = { rr: 'm-rerank', model: { primary: 'm-fake', fallbacks: ['m-other'] }, alt: '__none__', emb: 'm-emb' };
    expect(modelRefs(items, config)).toEqual([
      { id: 'm-rerank', kind: 'rerank' },
      { id: 'm-fake', kind: 'llm' },
      { id: 'm-other', kind: 'llm' },
    ]);
  });

  it('unions every knowledge-base multi selector, de-duplicated, sentinels dropped', () => {
    const items = schema(
      { name: 'a', type: 'knowledge-base-multi-selector' },
      { name: 'b', type: 'knowledge-base-multi-selector' },
      { name: 'single', type: 'knowledge-base-selector' },
    );
    expect(knowledgeBaseRefs(items, { a: ['kb1', 'kb1', '__none__', ''], b: ['kb2', 'kb1'], single: 'kb9' })).toEqual(['kb1', 'kb2']);
  });
});
