// The `generic` platform: a payload that already is an event envelope, checked against the protocol schema.
import { EventEnvelopeSchema, MAX_EVENT_DATA_BYTES } from '../protocol/event.js';
import { LbotError } from '../errors.js';
import { jsonByteLength } from '../json.js';
import { invalidPayload, parsePayload } from './payload-parse.js';
import type { NormalizeResult } from './types.js';

export type GenericOptions = { maxDataBytes?: number };

/** Validates an envelope as given (runner-protocol.md §3.1) and refuses oversized `data` (AC-193). */
export function normalizeGeneric(payload: unknown, opts: GenericOptions = {}): NormalizeResult {
  const envelope = parsePayload('generic', EventEnvelopeSchema, payload);
  const limit = opts.maxDataBytes ?? MAX_EVENT_DATA_BYTES;
  const size = serializedSize(envelope.data);
  if (size > limit) {
    throw new LbotError('event.invalid', `invalid generic payload: data: serializes to ${size} bytes, above the limit of ${limit} bytes`, {
      details: { path: ['data'], platform: 'generic', size, limit },
      hint: 'large payloads belong in raw_ref (a stored artifact) or in input.attachments, not inline in data',
    });
  }
  return { kind: 'event', platform: 'generic', envelope, raw: payload };
}

function serializedSize(data: unknown): number {
  try {
    return jsonByteLength(data);
  } catch (err) {
    // JSON.stringify recurses; hostile nesting (AC-203) must become a refusal, not a crash.
    if (err instanceof RangeError)
      throw invalidPayload(
        'generic',
        ['data'],
        'is nested too deeply to serialize',
        'flatten data, or store it as an artifact and reference it through raw_ref',
      );
    throw err;
  }
}
