// Parses `--event` input: one envelope or a JSON array of envelopes, with precise errors (AC-190–AC-193, AC-203).
import { LbotError } from '../errors.js';
import { EventEnvelopeSchema, type EventEnvelope } from '../protocol/event.js';
import { isRecord, jsonByteLength } from '../json.js';
import { parseJsonText } from '../json-parse.js';

/** Validates one parsed envelope; `index` names the element of an array input. */
export function parseEnvelope(value: unknown, source: string, maxDataBytes: number, index: number | null = null): EventEnvelope {
  const where = index === null ? source : `${source}[${index}]`;
  const parsed = EventEnvelopeSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String) ?? [];
    const field = path.join('.') || '(event)';
    throw new LbotError('event.invalid', `${where}: ${field}: ${issue?.message ?? 'invalid'}`, {
      details: { path, file: source, ...(index === null ? {} : { index }) },
    });
  }
  const size = jsonByteLength(parsed.data.data);
  if (size > maxDataBytes) {
    throw new LbotError('event.invalid', `${where}: data is ${size} bytes serialized; the limit is ${maxDataBytes} bytes`, {
      details: { path: ['data'], size_bytes: size, limit_bytes: maxDataBytes },
      hint: 'large payloads belong in raw_ref or input.attachments, not inline in data',
    });
  }
  return parsed.data;
}

/** Parses the text of an event file into envelopes (an object, or a non-empty array of objects). */
export function parseEventInput(text: string, source: string, maxDataBytes: number): EventEnvelope[] {
  if (text.trim() === '') throw new LbotError('event.parse_error', `${source}: the event file is empty`, { details: { file: source } });
  const raw = parseJsonText(text, source, 'event.parse_error');
  if (Array.isArray(raw)) {
    if (raw.length === 0) throw new LbotError('event.invalid', `${source}: the event array is empty`, { details: { path: [], file: source } });
    return raw.map((item, i) => parseEnvelope(item, source, maxDataBytes, i));
  }
  if (!isRecord(raw)) throw new LbotError('event.invalid', `${source}: expected an event object or an array of events`, { details: { path: [], file: source } });
  return [parseEnvelope(raw, source, maxDataBytes)];
}
