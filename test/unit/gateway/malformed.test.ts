// A malformed copy of every platform fixture is refused with `event.invalid` naming the broken field.
import { describe, expect, it } from 'vitest';
import { normalizePlatformPayload } from '../../../src/core/gateway/index.js';
import { refusal } from './helpers.js';
import { DELETE, FIXTURE_CASES, loadCase, mutateAt } from './fixture-table.js';

function dotted(path: Array<string | number>): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

describe('malformed platform payloads', () => {
  for (const c of FIXTURE_CASES) {
    const { path, value } = c.malformed;
    const what = typeof value === 'symbol' ? 'removed' : `set to ${JSON.stringify(value)}`;
    it(`${c.file}: ${dotted(path)} ${what} → event.invalid naming ${dotted(path)}`, () => {
      const broken = mutateAt(loadCase(c), path, value);
      const err = refusal(() => normalizePlatformPayload(c.platform, broken));
      expect(err.code).toBe('event.invalid');
      expect(err.details).toMatchObject({ path, platform: c.platform });
      expect(err.message).toContain(`invalid ${c.platform} payload: ${dotted(path)}:`);
      expect(err.hint).toBeTruthy();
    });
  }

  it('refuses a payload that is not a JSON object, for every platform', () => {
    for (const platform of ['onebot', 'telegram', 'slack', 'discord', 'lark', 'generic', 'auto'] as const) {
      for (const payload of [null, [], 'text', 42]) {
        const err = refusal(() => normalizePlatformPayload(platform, payload));
        expect(err.code).toBe('event.invalid');
        expect(err.message).toMatch(/expected a JSON object/);
      }
    }
  });

  it('says "is missing" when a required field is absent', () => {
    const c = FIXTURE_CASES.find((x) => x.file === 'telegram/text.nutgram.json');
    if (!c) throw new Error('fixture case missing');
    const err = refusal(() => normalizePlatformPayload('telegram', mutateAt(loadCase(c), ['message', 'chat', 'type'], DELETE)));
    expect(err.message).toMatch(/message\.chat\.type: is missing/);
  });
});
