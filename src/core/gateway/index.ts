// The event gateway: platform payloads → event envelopes, platform detection, and webhook de-duplication.
export { normalizePlatformPayload } from './normalize.js';
export { detectPlatform, matchingPlatforms } from './detect.js';
export { normalizeGeneric } from './generic.js';
export { createRedeliveryFilter, DEFAULT_REDELIVERY_MAX_ENTRIES, DEFAULT_REDELIVERY_WINDOW_MS } from './redelivery.js';
export type { RedeliveryFilter, RedeliveryFilterOptions } from './redelivery.js';
export { GATEWAY_EVENT_TYPES } from './event-types.js';
export type { GatewayEventType } from './event-types.js';
export { PLATFORMS, PlatformSchema, PlatformChoiceSchema } from './types.js';
export type { NormalizeOptions, NormalizeResult, NormalizedChallenge, NormalizedEvent, NormalizedIgnored, Platform, PlatformChoice } from './types.js';
