// Parses `--event` input: one envelope or a JSON array of envelopes, with precise errors (AC-190–AC-193, AC-203).
import { LbotError } from '../errors.js';
import { EventEnvelopeSchema, type EventEnvelope } from '../protocol/event.js';
import { isRecord, jsonByteLength } from '../json.js';
import { parseJsonText } from '../json-parse.js';
import { matchingPlatforms } from '../gateway/detect.js';
import type { normalizePlatformPayload } from '../gateway/normalize.js';
import type { PlatformChoice } from '../gateway/types.js';
import { firstIssue } from '../zod-issue.js';

/** The gateway's normalizer (injected: it is loaded only when an input holds a platform payload). */
export type Normalize = typeof normalizePlatformPayload;

/** Whether the parsed event file may hold a platform payload, so the caller loads the gateway first. */
export function needsGateway(value: unknown, platform: PlatformChoice): boolean {
  if (platform === 'generic') return false;
  if (platform !== 'auto') return true;
  const items: unknown[] = Array.isArray(value) ? value : [value];
  return items.some((item) => matchingPlatforms(item).some((p) => p !== 'generic'));
}

/** One event to run: the envelope, and the platform payload it came from (stored as its raw_ref). */
export type EventInput = { envelope: EventEnvelope; raw?: unknown };

/** Validates one parsed envelope; `index` names the element of an array input. */
export function parseEnvelope(value: unknown, source: string, maxDataBytes: number, index: number | null = null): EventEnvelope {
  const where = index === null ? source : `${source}[${index}]`;
  const parsed = EventEnvelopeSchema.safeParse(value);
  if (!parsed.success) {
    const issue = firstIssue(parsed.error, '(event)');
    throw new LbotError('event.invalid', `${where}: ${issue.text}`, {
      details: { path: issue.path, file: source, ...(index === null ? {} : { index }) },
    });
  }
  let size: number;
  try {
    size = jsonByteLength(parsed.data.data);
  } catch {
    // JSON.stringify overflows the stack on pathologically deep nesting (AC-203).
    throw new LbotError('event.invalid', `${where}: data is nested too deeply to process`, { details: { path: ['data'], file: source } });
  }
  if (size > maxDataBytes) {
    throw new LbotError('event.invalid', `${where}: data is ${size} bytes serialized; the limit is ${maxDataBytes} bytes`, {
      details: { path: ['data'], size_bytes: size, limit_bytes: maxDataBytes },
      hint: 'large payloads belong in raw_ref or input.attachments, not inline in data',
    });
  }
  return parsed.data;
}

/**
 * One item of an event file: an envelope as-is, or a platform payload normalized by the gateway.
 * With `auto`, anything that looks like an envelope (or like no platform) is checked as an envelope,
 * so a broken envelope is reported field by field.
 */
export function parseEventItem(
  value: unknown,
  source: string,
  maxDataBytes: number,
  platform: PlatformChoice,
  index: number | null,
  normalize?: Normalize,
): EventInput {
  const matched = platform === 'auto' ? matchingPlatforms(value) : [];
  if (platform === 'generic' || (platform === 'auto' && (matched.length === 0 || matched.includes('generic')))) {
    return { envelope: parseEnvelope(value, source, maxDataBytes, index) };
  }
  if (!normalize) throw new LbotError('internal', 'a platform payload needs the gateway: load it with needsGateway() first');
  const result = normalize(platform, value);
  if (result.kind !== 'event') {
    const what = result.kind === 'challenge' ? 'a URL-verification handshake' : `ignored (${result.reason})`;
    throw new LbotError('event.invalid', `${source}${index === null ? '' : `[${index}]`}: this ${result.platform} payload is ${what}, not an event`, {
      details: { path: [], platform: result.platform },
    });
  }
  return { envelope: parseEnvelope(result.envelope, source, maxDataBytes, index), raw: result.raw };
}

/** Parses the JSON of an event file once; the value then goes to needsGateway and eventsFromJson. */
export function parseEventJson(text: string, source: string): unknown {
  if (text.trim() === '') throw new LbotError('event.parse_error', `${source}: the event file is empty`, { details: { file: source } });
  return parseJsonText(text, source, 'event.parse_error');
}

/** Parses the text of an event file into events (an object, or a non-empty array of objects). */
export function parseEventInput(text: string, source: string, maxDataBytes: number, platform: PlatformChoice = 'auto', normalize?: Normalize): EventInput[] {
  return eventsFromJson(parseEventJson(text, source), source, maxDataBytes, platform, normalize);
}

/** The events of a parsed event file (an object, or a non-empty array of objects). */
export function eventsFromJson(raw: unknown, source: string, maxDataBytes: number, platform: PlatformChoice = 'auto', normalize?: Normalize): EventInput[] {
  if (Array.isArray(raw)) {
    if (raw.length === 0) throw new LbotError('event.invalid', `${source}: the event array is empty`, { details: { path: [], file: source } });
    return raw.map((item, i) => parseEventItem(item, source, maxDataBytes, platform, i, normalize));
  }
  if (!isRecord(raw))
    throw new LbotError('event.invalid', `${source}: expected an event object or an array of events`, { details: { path: [], file: source } });
  return [parseEventItem(raw, source, maxDataBytes, platform, null, normalize)];
}
