// The generic platform: an envelope given as-is is checked against the protocol schema.
import { describe, expect, it } from 'vitest';
import { normalizeGeneric, normalizePlatformPayload } from '../../../src/core/gateway/index.js';
import { envelopeOf, refusal } from './helpers.js';

const minimal = { event_id: 'api:1', event_type: 'api.invoked', source: 'api', input: {}, delivery: { surface: 'api' } };

describe('generic envelopes', () => {
  it('accepts a minimal envelope and applies the protocol defaults', () => {
    const result = normalizePlatformPayload('generic', minimal);
    const env = envelopeOf(result);
    expect(env).toMatchObject({ event_id: 'api:1', event_time: null, actor: null, data: {}, input: { text: null, contents: [], attachments: [] } });
    expect(result.kind === 'event' && result.raw).toBe(minimal);
  });

  it('names the field that breaks the schema', () => {
    expect(refusal(() => normalizePlatformPayload('generic', { ...minimal, source: 'carrier-pigeon' })).details).toMatchObject({
      path: ['source'],
      platform: 'generic',
    });
    expect(refusal(() => normalizePlatformPayload('generic', { ...minimal, event_time: 'yesterday' })).details).toMatchObject({ path: ['event_time'] });
    expect(refusal(() => normalizePlatformPayload('generic', { ...minimal, input: { contents: 'x' } })).details).toMatchObject({ path: ['input', 'contents'] });
    expect(refusal(() => normalizePlatformPayload('generic', { ...minimal, extra: 1 })).code).toBe('event.invalid');
  });

  it('refuses oversized data with a hint to use raw_ref or attachments', () => {
    const err = refusal(() => normalizeGeneric({ ...minimal, data: { blob: 'x'.repeat(200) } }, { maxDataBytes: 100 }));
    expect(err.code).toBe('event.invalid');
    expect(err.details).toMatchObject({ path: ['data'], limit: 100 });
    expect(err.hint).toMatch(/raw_ref/);
  });

  it('refuses hostile nesting in data instead of overflowing the stack (AC-203)', () => {
    let deep: unknown = [];
    for (let i = 0; i < 20000; i++) deep = [deep];
    const err = refusal(() => normalizePlatformPayload('generic', { ...minimal, data: { deep } }));
    expect(err.code).toBe('event.invalid');
    expect(err.details).toMatchObject({ path: ['data'] });
  });
});
