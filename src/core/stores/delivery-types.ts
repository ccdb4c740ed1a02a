// The delivery store: the outbox of platform replies, long-polling offsets and schedule ticks.
import type { JsonObject } from '../protocol/event.js';

export type OutboxStatus = 'pending' | 'sending' | 'delivered' | 'failed';

/** A platform's answer kept on a row that was retried or failed. */
export type OutboxError = { code: string; message: string; status: number | null; retry_after_s: number | null };

export type OutboxDraft = {
  /** Unique per outbound message: recording the same key twice keeps the first row. */
  idempotency_key: string;
  account: string;
  platform: string;
  op: 'send' | 'edit';
  run_id: string | null;
  event_id: string | null;
  conversation_id: string | null;
  /** The reply target of the event (delivery.reply_target) plus what the message needs. */
  target: JsonObject;
  text: string;
  /** For an edit: the key of the send whose platform message it edits. */
  edits_key: string | null;
};

export type OutboxRecord = OutboxDraft & {
  id: number;
  status: OutboxStatus;
  attempts: number;
  next_attempt_at: number;
  owner: { pid: number; host: string } | null;
  platform_message_id: string | null;
  /** For an edit claimed for sending: the platform message id of the send it edits. */
  edits_message_id: string | null;
  error: OutboxError | null;
  created_at: number;
  updated_at: number;
};

export type DeliveryStore = {
  /** Records messages before they are sent; returns the stored rows (existing keys keep their row). */
  record(drafts: readonly OutboxDraft[], nowS: number): OutboxRecord[];
  /**
   * Claims up to `limit` due rows for `owner` (status sending), oldest first. Due: pending with
   * next_attempt_at <= now; an edit only once the send it edits was delivered.
   */
  claimDue(owner: { pid: number; host: string }, nowS: number, limit: number): OutboxRecord[];
  markDelivered(id: number, platformMessageId: string | null, nowS: number): void;
  /** Back to pending for another attempt at `nextAtS`, keeping the platform's answer. */
  markRetry(id: number, error: OutboxError, nextAtS: number, nowS: number): void;
  markFailed(id: number, error: OutboxError, nowS: number): void;
  /** Rows left `sending` by owners `isGone` says are dead go back to pending (their attempt is resumed). */
  releaseAbandoned(isGone: (owner: { pid: number; host: string }) => boolean, nowS: number): number;
  /** A failed row back to pending with its attempts reset; false when no failed row has that id. */
  retry(id: number, nowS: number): boolean;
  get(id: number): OutboxRecord | null;
  list(opts: { status?: OutboxStatus; run_id?: string; limit?: number }): OutboxRecord[];
  /** The earliest next_attempt_at of a pending row, or null. */
  nextDueAt(): number | null;

  /** The stored offset of a long-polling account (null when it never polled). */
  pollOffset(account: string): number | null;
  setPollOffset(account: string, nextOffset: number, nowS: number): void;

  /** Claims one tick of a schedule; true for exactly one caller per (schedule, tick). */
  claimTick(schedule: string, tickAtS: number, owner: { pid: number; host: string }, nowS: number): boolean;
  setTickRuns(schedule: string, tickAtS: number, runIds: readonly string[]): void;
  /** The latest tick that fired, or null. */
  lastTick(schedule: string): number | null;
  ticks(schedule: string, limit: number): Array<{ tick_at: number; run_ids: string[]; created_at: number }>;

  /**
   * Claims an HTTP bot's idempotency key; true for exactly one caller. Keys older than `ttlS` are
   * forgotten first (a request that late is a new message).
   */
  claimHttpKey(bot: string, key: string, eventId: string, nowS: number, ttlS: number): boolean;
  /** Gives a claimed key back (its run could not start), so the caller's retry is not a duplicate. */
  releaseHttpKey(bot: string, key: string): void;
  /** The current generation of an HTTP bot session (0 until it is reset). */
  sessionGeneration(bot: string, sessionId: string): number;
  /** Moves the session to its next generation and returns it. */
  resetSession(bot: string, sessionId: string, nowS: number): number;
};
