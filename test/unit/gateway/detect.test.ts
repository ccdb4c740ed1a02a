// `--platform auto`: each fixture is recognized as its own platform, and ambiguity or no match is refused.
import { describe, expect, it } from 'vitest';
import { detectPlatform, matchingPlatforms, normalizePlatformPayload } from '../../../src/core/gateway/index.js';
import { refusal } from './helpers.js';
import { FIXTURE_CASES, loadCase } from './fixture-table.js';

const SLACK_AND_LARK_CHALLENGES = new Set(['slack/url_verification.slack-docs.json', 'slack/url_verification.slack-events-api.json']);

describe('detectPlatform', () => {
  for (const c of FIXTURE_CASES.filter((x) => !SLACK_AND_LARK_CHALLENGES.has(x.file))) {
    it(`${c.file} → ${c.platform}`, () => {
      const payload = loadCase(c);
      expect(detectPlatform(payload)).toBe(c.platform);
      expect(normalizePlatformPayload('auto', payload)).toEqual(normalizePlatformPayload(c.platform, payload));
    });
  }

  it('refuses a url_verification body, which Slack and Lark send alike, naming both and suggesting --platform', () => {
    for (const c of FIXTURE_CASES.filter((x) => SLACK_AND_LARK_CHALLENGES.has(x.file))) {
      const payload = loadCase(c);
      expect(matchingPlatforms(payload)).toEqual(['slack', 'lark']);
      const err = refusal(() => detectPlatform(payload));
      expect(err.code).toBe('event.invalid');
      expect(err.message).toMatch(/matches slack and lark/);
      expect(err.hint).toMatch(/--platform slack or --platform lark/);
      expect(err.details).toMatchObject({ platform: 'auto', matched: ['slack', 'lark'] });
      // With the platform named, either answers the same challenge.
      const { platform: _slack, ...slackAnswer } = normalizePlatformPayload('slack', payload);
      const { platform: _lark, ...larkAnswer } = normalizePlatformPayload('lark', payload);
      expect(larkAnswer).toEqual(slackAnswer);
    }
  });

  it('refuses a payload no platform recognizes, listing the keys it saw', () => {
    const err = refusal(() => detectPlatform({ hello: 'world', n: 1 }));
    expect(err.code).toBe('event.invalid');
    expect(err.message).toMatch(/matches none of onebot\|telegram\|slack\|discord\|lark\|generic/);
    expect(err.message).toMatch(/keys hello, n/);
    expect(err.hint).toMatch(/--platform/);
    expect(err.details).toMatchObject({ path: [], platform: 'auto', matched: [] });
  });

  it('recognizes a generic envelope, even one missing fields (so the schema can name them)', () => {
    expect(detectPlatform({ event_id: 'e1', event_type: 'message.received', source: 'api', input: {}, delivery: { surface: 'api' } })).toBe('generic');
    expect(detectPlatform({ event_id: 'e1', source: 'api', input: {}, delivery: { surface: 'api' } })).toBe('generic');
    const err = refusal(() => normalizePlatformPayload('auto', { event_id: 'e1', source: 'api', input: {}, delivery: { surface: 'api' } }));
    expect(err.details).toMatchObject({ path: ['event_type'], platform: 'generic' });
  });

  it('recognizes encrypted and schema 1.0 Lark bodies, then explains why they cannot be read', () => {
    expect(detectPlatform({ encrypt: 'FIAfJPGRmFZWkaxPQ1XrJZVbv2JwdjfLk4jx0k' })).toBe('lark');
    const enc = refusal(() => normalizePlatformPayload('auto', { encrypt: 'abc' }));
    expect(enc.details).toMatchObject({ path: ['encrypt'], platform: 'lark' });
    expect(enc.hint).toMatch(/Encrypt Key/);
    const v1 = refusal(() => normalizePlatformPayload('auto', { uuid: 'u1', token: 't', ts: '1', type: 'event_callback', event: { type: 'message' } }));
    expect(v1.message).toMatch(/schema 1\.0/);
  });
});
