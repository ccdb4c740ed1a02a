// Turns a platform normalizer's draft into a validated envelope: defaults, text rule, options, raw kept apart.
import { createHash } from 'node:crypto';
import { LbotError } from '../errors.js';
import { EventEnvelopeSchema, type Actor, type ArtifactRef, type ContentElement, type Delivery, type JsonObject, type Subject } from '../protocol/event.js';
import type { GatewayEventType } from './event-types.js';
import type { NormalizedEvent, NormalizeOptions, Platform } from './types.js';

export type InputDraft = {
  contents: ContentElement[];
  attachments: ArtifactRef[];
  message_chain?: JsonObject | JsonObject[] | null;
  /** Set only where the text is not the concatenation of text contents (e.g. a friend request's comment). */
  text?: string | null;
};

export type EnvelopeDraft = {
  event_id: string;
  event_type: GatewayEventType;
  event_time: number | null;
  source_event_type: string;
  bot_id: string | null;
  conversation_id: string | null;
  thread_id: string | null;
  actor: Actor | null;
  subject: Subject | null;
  input: InputDraft;
  delivery: Delivery;
  data: JsonObject;
};

export const EMPTY_INPUT: InputDraft = { contents: [], attachments: [] };

/** Validates the draft as an envelope and wraps it as the `event` result. */
export function finishEvent(platform: Platform, draft: EnvelopeDraft, raw: unknown, opts: NormalizeOptions): NormalizedEvent {
  const { input } = draft;
  const text = input.text !== undefined ? input.text : textOfContents(input.contents);
  const parsed = EventEnvelopeSchema.safeParse({
    ...draft,
    source: 'platform',
    event_time: draft.event_time ?? opts.receivedAt ?? null,
    input: { text, contents: input.contents, attachments: input.attachments, message_chain: input.message_chain ?? null },
    raw_ref: { artifact_id: null, storage_key: null },
  });
  if (!parsed.success) {
    // A draft that fails the envelope schema is a gateway bug, not a bad payload.
    throw new LbotError('internal', `the ${platform} gateway built an invalid envelope: ${parsed.error.message}`, {
      details: { platform, source_event_type: draft.source_event_type },
    });
  }
  return { kind: 'event', platform, envelope: parsed.data, raw };
}

/** runner-protocol.md §3.1: text is the concatenation of all text elements, or null when there are none. */
export function textOfContents(contents: ContentElement[]): string | null {
  const texts = contents.filter((c) => c.type === 'text' && typeof c.text === 'string').map((c) => c.text ?? '');
  return texts.length === 0 ? null : texts.join('');
}

/** The bot id of an event: the caller's override, else what the payload names. */
export function effectiveBotId(opts: NormalizeOptions, fromPayload: string | null): string | null {
  return opts.botId ?? fromPayload;
}

/**
 * `<platform>:<32 hex>` over the bot id and the platform's identity of the event, so a re-delivery to the
 * same bot gets the same id while the same platform event seen by two bots gets two ids.
 */
export function platformEventId(platform: Platform, botId: string | null, parts: ReadonlyArray<string | number | null | undefined>): string {
  const joined = [platform, botId, ...parts].map((p) => (p === null || p === undefined ? '' : String(p))).join('|');
  return `${platform}:${createHash('sha256').update(joined).digest('hex').slice(0, 32)}`;
}

/** An actor for a platform user (or bot) account. */
export function userActor(id: string | number, name: string | null, metadata: JsonObject = {}, actorType: 'user' | 'bot' | 'channel' = 'user'): Actor {
  return { actor_type: actorType, actor_id: String(id), actor_name: name, metadata };
}

/** The actor of an event whose operator the payload does not name (runner-protocol.md §3.2). */
export function systemActor(metadata: JsonObject = {}): Actor {
  return { actor_type: 'system', actor_id: null, actor_name: null, metadata };
}

/** A plain text content element. */
export function textContent(text: string): ContentElement {
  return { type: 'text', text };
}

export type PlatformFile = {
  artifact_type: string;
  id: string;
  url?: string | null;
  name?: string | null;
  mime_type?: string | null;
  size?: number | null;
};

/** A reference to a platform-hosted file; never fetched here, the id is what the platform API needs. */
export function platformArtifact(platform: Platform, file: PlatformFile): ArtifactRef {
  return {
    artifact_id: `${platform}:${file.artifact_type}:${file.id}`,
    artifact_type: file.artifact_type,
    mime_type: file.mime_type ?? null,
    size: file.size ?? null,
    name: file.name ?? null,
    source: 'platform',
    url: file.url ?? null,
    id: file.id,
  };
}

/** Epoch seconds from milliseconds given as a number or a digit string. */
export function secondsFromMs(ms: string | number): number | null {
  const n = typeof ms === 'number' ? ms : /^\d+$/.test(ms) ? Number(ms) : NaN;
  return Number.isFinite(n) ? Math.floor(n / 1000) : null;
}

/** Epoch seconds from an ISO 8601 timestamp. */
export function secondsFromIso(iso: string): number | null {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}

/** Drops keys whose value is undefined, so small `data` objects stay JSON-clean. */
export function compact(obj: Record<string, unknown>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out;
}
