// Store interfaces the host depends on (architecture.md §5); SQLite and lowdb classes implement them.
// Any method may throw LbotError `store.locked` (another process held the write lock past the busy
// timeout; retryable) or `store.unavailable` (the data dir or database failed underneath).
import type { ArtifactMetadata, ArtifactReadResult, EventRecord, TranscriptItem } from '../protocol/proxy.js';
import type { StateScope } from '../protocol/binding.js';
import type { JsonObject } from '../protocol/event.js';
import type { DeliveryStore } from './delivery-types.js';
import type { ErrorValue } from '../protocol/error-value.js';
import type { DeliveredLine } from '../protocol/result-line.js';
import type { z } from 'zod';
import type { ApiCallAuditSchema, ObservedNoticeSchema, RunStatusSchema } from './run-schemas.js';

/** A new event-log row; ids, seq and created_at are assigned by the store. */
export type EventLogAppend = {
  event_id: string;
  event_type: string;
  event_time: number | null;
  source: string;
  bot_id: string | null;
  workspace_id: string | null;
  conversation_id: string | null;
  thread_id: string | null;
  actor_type: string | null;
  actor_id: string | null;
  actor_name: string | null;
  subject_type: string | null;
  subject_id: string | null;
  /** Full text; the store truncates it to 1000 chars (997 + '...'). */
  input_text: string | null;
  input_json: JsonObject | null;
  raw_ref: string | null;
  run_id: string | null;
  runner_id: string | null;
  metadata: JsonObject;
};

export type EventPageQuery = {
  conversation_id?: string | null;
  event_types?: readonly string[] | null;
  before_seq?: number | null;
  /** Clamped by the store to 1..100. */
  limit: number;
};

export type Page<T> = { items: T[]; next_seq: number | null; has_more: boolean };

/** A conversation as the event log knows it: how many events, and its last one (`lbot conversations`). */
export type ConversationSummary = {
  conversation_id: string;
  events: number;
  first_at: number;
  last_at: number;
  last_seq: number;
  last_event_type: string;
  last_actor_id: string | null;
  last_actor_name: string | null;
  last_input: string | null;
  last_run_id: string | null;
};

export interface EventLog {
  append(record: EventLogAppend): EventRecord;
  /** Newest first; `conversation_id: undefined` means every conversation (CLI), null means none. */
  page(query: EventPageQuery): Page<EventRecord>;
  /** Records with this event_id, newest first. */
  findByEventId(event_id: string): EventRecord[];
  latestSeq(conversation_id: string): number | null;
  /** Conversations with events, the most recently active first; `limit` clamped to 1..100. */
  conversations(limit: number): ConversationSummary[];
}

export type TranscriptAppend = {
  event_id: string;
  conversation_id: string;
  thread_id: string | null;
  role: string;
  item_type: string;
  /** Full text; the store truncates it to 4000 chars (3997 + '...'). */
  content: string | null;
  content_json: JsonObject | null;
  artifact_refs: JsonObject[];
  run_id: string | null;
  runner_id: string | null;
  metadata: JsonObject;
};

export type TranscriptPageQuery = {
  conversation_id: string;
  before_seq?: number | null;
  after_seq?: number | null;
  /** Clamped by the store to 1..100. */
  limit: number;
  direction: 'backward' | 'forward';
  include_artifacts: boolean;
};

export type TranscriptPage = { items: TranscriptItem[]; next_seq: number | null; prev_seq: number | null; has_more: boolean };

export type TranscriptSearchQuery = {
  conversation_id: string;
  query: string;
  roles?: readonly string[];
  item_types?: readonly string[];
  /** Clamped by the store to 1..100. */
  top_k: number;
};

export interface Transcript {
  append(item: TranscriptAppend): TranscriptItem;
  page(query: TranscriptPageQuery): TranscriptPage;
  /** Case-insensitive literal substring match (`%`, `_`, `\` match themselves), newest first. */
  search(query: TranscriptSearchQuery): TranscriptItem[];
  latestSeq(conversation_id: string): number | null;
}

export type RunStatus = z.infer<typeof RunStatusSchema>;
export type ApiCallAudit = z.infer<typeof ApiCallAuditSchema>;
export type ObservedNotice = z.infer<typeof ObservedNoticeSchema>;

/** The process that executes a run: a `running` run whose owner is gone was interrupted. */
export type RunOwner = { pid: number; host: string };

/** How a run failed: the one error value shape. */
export type RunError = ErrorValue;

export type RunRecord = {
  run_id: string;
  runner_id: string;
  binding_id: string;
  event_id: string;
  conversation_id: string | null;
  status: RunStatus;
  error: RunError | null;
  started_at: number;
  ended_at: number | null;
  api_calls: ApiCallAudit[];
  observed: ObservedNotice[];
  /** Delivered results as result-stream lines, in order (served by `GET /v1/runs/:id/results`). */
  results: DeliveredLine[];
  state_writes: Array<{ scope: string; key: string }>;
  warnings: string[];
  stderr_tail: string | null;
};

export interface RunStore {
  /** Throws LbotError('invalid_argument') when the run_id already exists. */
  create(run: Pick<RunRecord, 'run_id' | 'runner_id' | 'binding_id' | 'event_id' | 'conversation_id' | 'started_at'> & { owner?: RunOwner }): void;
  /** Throws LbotError('not_found') for an unknown run_id (so do the add* appends). */
  finish(run_id: string, status: Exclude<RunStatus, 'running'>, error: RunError | null, ended_at: number, stderr_tail: string | null): void;
  /** Appends to the run's audit. Each append is durable on return. */
  addApiCall(run_id: string, call: ApiCallAudit): void;
  /** Appends many audit entries (of one or more runs) in one transaction. */
  addApiCalls(entries: ReadonlyArray<{ run_id: string; call: ApiCallAudit }>): void;
  /** Appends the audit of a call no run can be named for (its plugin had no live run). Durable on return. */
  addUnattributedCall(call: ApiCallAudit): void;
  /** Audit entries of unattributed calls, oldest first; the newest `limit` with a limit. */
  unattributedCalls(opts?: { caller_plugin?: string; limit?: number }): ApiCallAudit[];
  addObserved(run_id: string, notice: ObservedNotice): void;
  addResult(run_id: string, result: DeliveredLine): void;
  addStateWrite(run_id: string, write: { scope: string; key: string }): void;
  addWarning(run_id: string, warning: string): void;
  get(run_id: string): RunRecord | null;
  /** Oldest first; with `limit`, the newest `limit` runs (still oldest first). */
  list(opts?: { limit?: number }): RunRecord[];
  /** Runs still `running`, with the process that owns them (null for runs recorded before owners were kept). */
  running(): Array<{ run_id: string; owner: RunOwner | null }>;
  /** Marks runs still `running` whose process is gone as `interrupted` (a crashed `lbot run`). */
  markInterrupted(run_ids: readonly string[]): void;
}

export type StateContextColumns = {
  runner_id: string;
  binding_identity: string;
  bot_id: string | null;
  workspace_id: string | null;
  conversation_id: string | null;
  thread_id: string | null;
  actor_type: string | null;
  actor_id: string | null;
  subject_type: string | null;
  subject_id: string | null;
};

export type StateEntry = {
  runner_id: string;
  binding_id: string;
  scope: StateScope;
  scope_key: string;
  key: string;
  value: unknown;
  updated_at: number;
};

export interface StateStore {
  get(scope_key: string, key: string): { found: boolean; value: unknown };
  /** `value_json` is already serialized and size-checked by the caller; text that is not JSON is invalid_argument. */
  set(scope: StateScope, scope_key: string, key: string, value_json: string, columns: StateContextColumns): void;
  delete(scope_key: string, key: string): boolean;
  /** Keys in ascending order; limit clamped 1..100. */
  list(scope_key: string, prefix: string | null, limit: number): { keys: string[]; has_more: boolean };
  /** Every key/value of one scope key (for the context snapshot); unparseable rows skipped. */
  snapshot(scope_key: string): Record<string, unknown>;
  /** For `lbot state list`: sorted by runner, binding, scope key, key; no cap unless `limit` is given. */
  entries(filter: { runner_id?: string; binding_id?: string; scope?: StateScope; limit?: number }): StateEntry[];
}

export interface StorageStore {
  get(owner_type: string, owner: string, key: string): Buffer | null;
  set(owner_type: string, owner: string, key: string, value: Buffer): void;
  delete(owner_type: string, owner: string, key: string): boolean;
  /** Keys sorted ascending; `prefix` is literal. */
  list(owner_type: string, owner: string, prefix: string | null): string[];
}

export type ArtifactStorageType = 'binary_storage' | 'url' | 'platform_ref' | 'metadata_only';

export type ArtifactRegister = {
  artifact_id: string;
  artifact_type: string;
  mime_type: string | null;
  name: string | null;
  size_bytes: number | null;
  sha256: string | null;
  source: string;
  conversation_id: string | null;
  run_id: string | null;
  runner_id: string | null;
  bot_id: string | null;
  workspace_id: string | null;
  expires_at: number | null;
  metadata: JsonObject;
  /** Bytes to store content-addressed; when given, storage_type is binary_storage and sha256/size come from it. */
  content?: Buffer;
  /** For url / platform_ref records. */
  storage_type?: Exclude<ArtifactStorageType, 'binary_storage'>;
  storage_key?: string | null;
};

/** Host-side record; `storage_*`, `bot_id`, `workspace_id` never reach runners. */
export type ArtifactRecord = ArtifactMetadata & {
  storage_type: ArtifactStorageType;
  storage_key: string | null;
  bot_id: string | null;
  workspace_id: string | null;
};

export interface ArtifactStore {
  /** Throws LbotError('invalid_argument') on a duplicate artifact_id. */
  register(artifact: ArtifactRegister): ArtifactRecord;
  get(artifact_id: string): ArtifactRecord | null;
  /**
   * Range read; offset >= 0, length > 0 (default 1 MiB, capped at 10 MiB), else invalid_argument
   * with details.reason 'bad_range'. Bytes of a binary_storage record that are gone: not_found.
   */
  read(record: ArtifactRecord, offset: number, length: number | null): ArtifactReadResult;
  /** Oldest first; with `limit`, the newest `limit` records (still oldest first). */
  list(filter: { run_id?: string; conversation_id?: string; limit?: number }): ArtifactRecord[];
}

/** All stores of one data dir, with one owner that closes them. */
export type Stores = {
  events: EventLog;
  transcript: Transcript;
  runs: RunStore;
  state: StateStore;
  storage: StorageStore;
  artifacts: ArtifactStore;
  /** Platform replies, poll offsets and schedule ticks (delivery-types.ts). */
  delivery: DeliveryStore;
  /**
   * Runs `fn` as one transaction: the writes in it commit together (once, when it returns, or with
   * the group of writes it joined under a commit window).
   */
  transaction?<T>(fn: () => T): T;
  /** Makes every write made so far durable (a no-op unless a commit window holds some back). */
  commit(): void;
  close(): void;
};
