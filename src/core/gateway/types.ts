// Shared types of the event gateway: platforms, options and the normalization result.
import { z } from 'zod';
import type { EventEnvelope, JsonObject } from '../protocol/event.js';

export const PLATFORMS = ['onebot', 'telegram', 'slack', 'discord', 'lark', 'generic'] as const;
export const PlatformSchema = z.enum(PLATFORMS);
export type Platform = z.infer<typeof PlatformSchema>;

/** What `--platform` and the webhook route accept: a platform, or `auto` to detect it. */
export const PlatformChoiceSchema = z.enum([...PLATFORMS, 'auto']);
export type PlatformChoice = z.infer<typeof PlatformChoiceSchema>;

export type NormalizeOptions = {
  /** Overrides the bot id read from the payload (Telegram updates carry none). */
  botId?: string | null;
  /** Epoch seconds at which the payload arrived; used as `event_time` when the payload has no time. */
  receivedAt?: number | null;
};

/** A payload that became an event; `raw` is the payload as received, for the caller to store and reference. */
export type NormalizedEvent = { kind: 'event'; platform: Platform; envelope: EventEnvelope; raw: unknown };
/** A URL-verification handshake: `response` is the JSON body the webhook route answers with. */
export type NormalizedChallenge = { kind: 'challenge'; platform: Platform; response: JsonObject };
/** A well-formed payload of a type the gateway deliberately does not route. */
export type NormalizedIgnored = { kind: 'ignored'; platform: Platform; reason: string };

export type NormalizeResult = NormalizedEvent | NormalizedChallenge | NormalizedIgnored;
