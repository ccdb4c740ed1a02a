// The gateway's entry point: a platform payload in, an event envelope (or a challenge answer, or a skip) out.
import { LbotError } from '../errors.js';
import { isRecord } from '../json.js';
import { detectPlatform } from './detect.js';
import { normalizeDiscord } from './discord.js';
import { normalizeGeneric } from './generic.js';
import { normalizeLark } from './lark.js';
import { normalizeOneBot } from './onebot.js';
import { normalizeSlack } from './slack.js';
import { normalizeTelegram } from './telegram.js';
import type { NormalizeOptions, NormalizeResult, Platform, PlatformChoice } from './types.js';

const NORMALIZERS: Record<Platform, (payload: unknown, opts: NormalizeOptions) => NormalizeResult> = {
  onebot: normalizeOneBot,
  telegram: normalizeTelegram,
  slack: normalizeSlack,
  discord: normalizeDiscord,
  lark: normalizeLark,
  generic: (payload) => normalizeGeneric(payload),
};

/**
 * Normalizes a parsed JSON payload from `platform` (or `auto`, see detectPlatform). Pure: nothing is fetched or
 * stored; the caller stores `raw` and fills `envelope.raw_ref`. Malformed payloads throw `event.invalid`.
 */
export function normalizePlatformPayload(platform: PlatformChoice, payload: unknown, opts: NormalizeOptions = {}): NormalizeResult {
  if (!isRecord(payload)) {
    const got = Array.isArray(payload) ? 'an array' : payload === null ? 'null' : `a ${typeof payload}`;
    throw new LbotError('event.invalid', `invalid ${platform} payload: expected a JSON object, got ${got}`, {
      details: { path: [], platform },
      hint: 'send one event per request, as a JSON object',
    });
  }
  const chosen = platform === 'auto' ? detectPlatform(payload) : platform;
  return NORMALIZERS[chosen](payload, opts);
}
