// What a platform sender builds (one HTTP request) and how it reads the platform's answer.
import type { OutboxError, OutboxRecord } from '../../stores/delivery-types.js';

/** A GET sends no body (its `body` is ignored). */
export type OutboundRequest = { method: 'GET' | 'POST' | 'PATCH' | 'PUT'; url: string; headers: Record<string, string>; body: string };

/** The platform's HTTP answer, bounded in size before it gets here; `json` is null when the body is not JSON. */
export type PlatformAnswer = { status: number; header(name: string): string | null; json: unknown; text: string };

export type Outcome =
  | { kind: 'delivered'; message_id: string | null }
  /** Try again later; `error.retry_after_s` when the platform said when. */
  | { kind: 'retry'; error: OutboxError }
  /** The credential was refused as expired (Lark tenant tokens): fetch a new one and retry at once. */
  | { kind: 'reauth'; error: OutboxError }
  | { kind: 'failed'; error: OutboxError };

/** `nowS`: when the request is built (the HTTP bot signs its callbacks with it). */
export type SendInput = { base: string; token: string | null; item: OutboxRecord; nowS: number };

export type PlatformSender = {
  /** The request for one outbox row; throws invalid_argument when its target cannot be answered. */
  request(input: SendInput): OutboundRequest;
  read(answer: PlatformAnswer): Outcome;
};
