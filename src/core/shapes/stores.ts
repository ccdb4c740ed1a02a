// Shapes of the store records the inspection commands print (`runs`, `events`, `transcript`, `state`, `artifacts`).
import { z } from 'zod';
import { STATE_SCOPES } from '../protocol/binding.js';
import { ErrorValueSchema } from '../protocol/error-value.js';
import { ArtifactMetadataSchema, ArtifactReadResultSchema, EventRecordSchema, TranscriptItemSchema } from '../protocol/proxy-results.js';
import { DeliveredLineSchema } from './stream.js';
import { ApiCallAuditSchema, ObservedNoticeSchema, RunStatusSchema, StateWriteSchema } from '../stores/run-schemas.js';
import { defineShape } from './shape.js';

const epochSeconds = z.number().describe('seconds since the Unix epoch');

export const RunRecordSchema = z.strictObject({
  run_id: z.string(),
  runner_id: z.string(),
  binding_id: z.string(),
  event_id: z.string(),
  conversation_id: z.string().nullable(),
  status: RunStatusSchema,
  error: ErrorValueSchema.nullable(),
  started_at: epochSeconds,
  ended_at: epochSeconds.nullable(),
  api_calls: z.array(z.strictObject({ ...ApiCallAuditSchema.shape, at: epochSeconds })),
  observed: z.array(z.strictObject({ ...ObservedNoticeSchema.shape, at: epochSeconds })),
  results: z.array(DeliveredLineSchema).describe('delivered items as StreamItem lines'),
  state_writes: z.array(z.strictObject(StateWriteSchema.shape)),
  warnings: z.array(z.string()),
  stderr_tail: z.string().nullable(),
});
export const RunRecord = defineShape(
  'RunRecord',
  'item',
  'a run record: status, error, times, the audit of its API calls, observed notices, delivered results',
  RunRecordSchema,
);

export const EventRecord = defineShape('EventRecord', 'item', 'an event-log record; `seq` is the paging cursor (--before SEQ)', EventRecordSchema);
export const TranscriptItem = defineShape('TranscriptItem', 'item', 'one transcript item of a conversation; `seq` is the paging cursor', TranscriptItemSchema);

export const StateEntrySchema = z.strictObject({
  runner_id: z.string(),
  binding_id: z.string(),
  scope: z.enum(STATE_SCOPES),
  scope_key: z.string(),
  key: z.string(),
  value: z.unknown(),
  updated_at: epochSeconds,
});
export const StateEntry = defineShape('StateEntry', 'item', 'one state value with the runner, binding and scope it belongs to', StateEntrySchema);
export const StateValue = defineShape('StateValue', 'item', 'one state value (`state get`)', z.strictObject({ key: z.string(), value: z.unknown() }));
export const StateChange = defineShape(
  'StateChange',
  'item',
  'the outcome of `state set` / `state delete`',
  z.strictObject({ ok: z.literal(true), key: z.string(), scope_key: z.string(), deleted: z.boolean() }),
);

export const ArtifactSchema = ArtifactMetadataSchema.extend({
  storage_type: z.enum(['binary_storage', 'url', 'platform_ref', 'metadata_only']),
  reference: z.string().nullable().describe('the URL or platform reference; null for stored bytes'),
});
export const Artifact = defineShape('Artifact', 'item', 'public artifact metadata and how its bytes are held', ArtifactSchema);
export const ArtifactBytes = defineShape('ArtifactBytes', 'item', 'a range of artifact bytes, base64 (`artifacts read --json`)', ArtifactReadResultSchema);

export const Conversation = defineShape(
  'Conversation',
  'item',
  'a conversation of the event log with its last activity (`lbot conversations`), the most recently active first',
  z.strictObject({
    conversation_id: z.string(),
    events: z.number().int(),
    first_at: epochSeconds,
    last_at: epochSeconds,
    last_seq: z.number().int(),
    last_event_type: z.string(),
    last_actor_id: z.string().nullable(),
    last_actor_name: z.string().nullable(),
    last_input: z.string().nullable(),
    last_run_id: z.string().nullable(),
  }),
);

const SchemaStepSchema = z.strictObject({ version: z.number().int(), name: z.string() });

export const DbSchema = defineShape(
  'DbSchema',
  'item',
  'the run stores’ schema version and migrations (`lbot db status`, `lbot db migrate`)',
  z.strictObject({
    backend: z.enum(['sqlite', 'postgres']),
    location: z.string().describe('the SQLite file, or the PostgreSQL URL without its password'),
    schema_version: z.number().int(),
    latest_version: z.number().int().describe('the newest schema this lbot knows'),
    applied: z.array(SchemaStepSchema).describe('migrations recorded as applied, oldest first'),
    applied_now: z.array(SchemaStepSchema).describe('the migrations this call applied (empty for status)'),
  }),
);
