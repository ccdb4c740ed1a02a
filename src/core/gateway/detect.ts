// `--platform auto`: recognizes which platform sent a payload, refusing when none or several match.
import { LbotError } from '../errors.js';
import { isRecord } from '../json.js';
import type { Platform } from './types.js';

type Probe = (p: Record<string, unknown>) => boolean;

// Each probe looks only at the keys that set a platform's bodies apart; the normalizer then checks the rest.
const PROBES: ReadonlyArray<readonly [Platform, Probe]> = [
  ['onebot', (p) => typeof p.post_type === 'string' && 'self_id' in p],
  ['telegram', (p) => typeof p.update_id === 'number' || (p.ok === true && Array.isArray(p.result))],
  [
    'slack',
    (p) =>
      (p.type === 'event_callback' && typeof p.team_id === 'string') ||
      (p.type === 'url_verification' && typeof p.challenge === 'string') ||
      p.type === 'app_rate_limited',
  ],
  [
    'discord',
    (p) =>
      (typeof p.op === 'number' && 'd' in p) ||
      (typeof p.type === 'number' && typeof p.token === 'string' && typeof p.id === 'string') ||
      (isRecord(p.author) && typeof p.channel_id === 'string') ||
      (typeof p.joined_at === 'string' && isRecord(p.user) && typeof p.guild_id === 'string'),
  ],
  [
    'lark',
    (p) =>
      (p.schema === '2.0' && isRecord(p.header)) ||
      (p.type === 'url_verification' && typeof p.challenge === 'string') ||
      (typeof p.encrypt === 'string' && Object.keys(p).length === 1) ||
      (typeof p.uuid === 'string' && p.type === 'event_callback'),
  ],
  ['generic', (p) => typeof p.event_type === 'string' || 'delivery' in p || ('input' in p && 'source' in p)],
];

/** Every platform whose probe accepts the payload (diagnostics and tests). */
export function matchingPlatforms(payload: unknown): Platform[] {
  if (!isRecord(payload)) return [];
  return PROBES.filter(([, probe]) => probe(payload)).map(([platform]) => platform);
}

/** The one platform that matches the payload, else `event.invalid` saying which matched and suggesting --platform. */
export function detectPlatform(payload: unknown): Platform {
  const matches = matchingPlatforms(payload);
  const [only] = matches;
  if (matches.length === 1 && only !== undefined) return only;
  const all = PROBES.map(([p]) => p).join('|');
  if (matches.length === 0) {
    const what = isRecord(payload)
      ? `an object with keys ${Object.keys(payload).slice(0, 8).join(', ') || '(none)'}`
      : `a JSON ${Array.isArray(payload) ? 'array' : typeof payload}`;
    throw new LbotError('event.invalid', `cannot tell which platform sent this payload (${what}): it matches none of ${all}`, {
      details: { path: [], platform: 'auto', matched: [] },
      hint: `pass --platform ${all} to say what it is`,
    });
  }
  throw new LbotError('event.invalid', `cannot tell which platform sent this payload: it matches ${matches.join(' and ')}`, {
    details: { path: [], platform: 'auto', matched: matches },
    hint: `pass --platform ${matches.join(' or --platform ')} to choose`,
  });
}
