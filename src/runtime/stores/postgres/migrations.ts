// Versioned schema of the PostgreSQL stores: an append-only list of migrations recorded in
// schema_migrations, applied under a session advisory lock so processes starting together migrate once.
import { LbotError } from '../../../core/errors.js';
import { num, text } from '../../../core/stores/sqlite/columns.js';
import { PgQuery, redactUrl, toPgStoreError, type PgStoreDb } from './connection.js';

export type PgMigration = { version: number; name: string; sql: string };

/** The key of the advisory lock that serializes migrations of one database ('lbot' in ASCII). */
const MIGRATION_LOCK_KEY = 0x6c626f74;

/**
 * Never edit a released migration; add a new one. Key columns are COLLATE "C" so keys sort by code
 * point whatever the database's locale, as SQLite's BINARY collation does.
 */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: 'event log, transcript with trigram search, runs and their audit, state, storage, artifacts with their bytes',
    sql: `
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE event_log (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id        text NOT NULL,
  event_type      text NOT NULL,
  event_time      double precision,
  source          text NOT NULL,
  bot_id          text,
  workspace_id    text,
  conversation_id text,
  thread_id       text,
  actor_type      text,
  actor_id        text,
  actor_name      text,
  subject_type    text,
  subject_id      text,
  input_summary   text,
  input_json      json,
  raw_ref         text,
  run_id          text,
  runner_id       text,
  created_at      double precision NOT NULL,
  metadata_json   json NOT NULL DEFAULT '{}'
);
CREATE INDEX event_log_conversation ON event_log (conversation_id, id);
CREATE INDEX event_log_event_id ON event_log (event_id, id);
CREATE INDEX event_log_type ON event_log (event_type, id);
CREATE INDEX event_log_run ON event_log (run_id);

CREATE TABLE transcript (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transcript_id      text NOT NULL UNIQUE,
  event_id           text NOT NULL,
  conversation_id    text NOT NULL,
  thread_id          text,
  role               text NOT NULL,
  item_type          text NOT NULL DEFAULT 'message',
  content            text,
  content_json       json,
  artifact_refs_json json NOT NULL DEFAULT '[]',
  run_id             text,
  runner_id          text,
  created_at         double precision NOT NULL,
  metadata_json      json NOT NULL DEFAULT '{}'
);
CREATE INDEX transcript_conversation ON transcript (conversation_id, id);
CREATE INDEX transcript_event ON transcript (event_id);
CREATE INDEX transcript_run ON transcript (run_id);
-- Trigram index for the literal, case-insensitive substring search (ILIKE), like SQLite's FTS5 trigram table.
CREATE INDEX transcript_content_trgm ON transcript USING gin (content gin_trgm_ops);

CREATE TABLE runs (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id          text NOT NULL UNIQUE,
  runner_id       text NOT NULL,
  binding_id      text NOT NULL,
  event_id        text NOT NULL,
  conversation_id text,
  status          text NOT NULL CHECK (status IN ('running','completed','failed','timed_out','cancelled','interrupted')),
  error_json      text,
  started_at      double precision NOT NULL,
  ended_at        double precision,
  stderr_tail     text,
  owner_pid       integer,
  owner_host      text
);
CREATE INDEX runs_running ON runs (status) WHERE status = 'running';

-- Append-only audit of a run: one INSERT per proxy call, notice, result, state write or warning.
CREATE TABLE run_items (
  id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id    text NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  kind      text NOT NULL CHECK (kind IN ('api_call','observed','result','state_write','warning')),
  body_json text NOT NULL
);
CREATE INDEX run_items_run ON run_items (run_id, id);

CREATE TABLE unattributed_calls (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  caller_plugin text NOT NULL,
  body_json     text NOT NULL
);
CREATE INDEX unattributed_calls_plugin ON unattributed_calls (caller_plugin, id);

CREATE TABLE agent_runner_state (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  runner_id        text COLLATE "C" NOT NULL,
  binding_identity text COLLATE "C" NOT NULL,
  scope            text NOT NULL,
  scope_key        text COLLATE "C" NOT NULL,
  state_key        text COLLATE "C" NOT NULL,
  value_json       text,
  bot_id           text,
  workspace_id     text,
  conversation_id  text,
  thread_id        text,
  actor_type       text,
  actor_id         text,
  subject_type     text,
  subject_id       text,
  created_at       double precision NOT NULL,
  updated_at       double precision NOT NULL,
  UNIQUE (scope_key, state_key)
);
CREATE INDEX agent_runner_state_owner ON agent_runner_state (runner_id, binding_identity);
CREATE INDEX agent_runner_state_scope ON agent_runner_state (scope);

CREATE TABLE binary_storage (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  owner_type  text COLLATE "C" NOT NULL,
  owner       text COLLATE "C" NOT NULL,
  storage_key text COLLATE "C" NOT NULL,
  value       bytea NOT NULL,
  created_at  double precision NOT NULL,
  updated_at  double precision NOT NULL,
  UNIQUE (owner_type, owner, storage_key)
);

-- Artifact bytes, content-addressed and shared by every host (SQLite keeps them in <data-dir>/artifacts/).
-- EXTERNAL: stored uncompressed, so a range read fetches only the chunks it needs.
CREATE TABLE artifact_blobs (
  sha256     text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  bytes      bytea NOT NULL,
  created_at double precision NOT NULL
);
ALTER TABLE artifact_blobs ALTER COLUMN bytes SET STORAGE EXTERNAL;

CREATE TABLE agent_artifact (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  artifact_id     text NOT NULL UNIQUE,
  artifact_type   text NOT NULL,
  mime_type       text,
  name            text,
  size_bytes      bigint,
  sha256          text,
  source          text NOT NULL,
  storage_key     text,
  storage_type    text NOT NULL DEFAULT 'binary_storage'
                  CHECK (storage_type IN ('binary_storage','url','platform_ref','metadata_only')),
  conversation_id text,
  run_id          text,
  runner_id       text,
  bot_id          text,
  workspace_id    text,
  created_at      double precision NOT NULL,
  expires_at      double precision,
  metadata_json   json NOT NULL DEFAULT '{}'
);
CREATE INDEX agent_artifact_conversation ON agent_artifact (conversation_id, id);
CREATE INDEX agent_artifact_run ON agent_artifact (run_id, id);
CREATE INDEX agent_artifact_sha256 ON agent_artifact (sha256);
`,
  },
  {
    version: 2,
    name: 'run queue: accepted runs waiting for or held by a worker, and the workers with their heartbeats',
    sql: `
-- One row per accepted (event, binding): the request a worker runs, and where it stands (docs/scale.md). The graphile-worker
-- job that carries it is keyed by run_id; UNIQUE (event_id, binding_id) makes accepting idempotent.
CREATE TABLE run_queue (
  seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id          text NOT NULL UNIQUE,
  event_id        text NOT NULL,
  binding_id      text NOT NULL,
  runner_id       text NOT NULL,
  conversation_id text,
  queue_name      text,
  request_json    text NOT NULL,
  status          text NOT NULL CHECK (status IN ('queued','running','done','cancelled')),
  attempts        integer NOT NULL DEFAULT 0,
  cancel_requested boolean NOT NULL DEFAULT false,
  worker_id       text,
  accepted_at     double precision NOT NULL,
  started_at      double precision,
  ended_at        double precision,
  last_error      text,
  UNIQUE (event_id, binding_id)
);
CREATE INDEX run_queue_lane ON run_queue (queue_name, seq) WHERE status IN ('queued','running');
CREATE INDEX run_queue_worker ON run_queue (worker_id) WHERE status = 'running';

-- Live lbot worker processes; a row whose heartbeat is older than its lease belongs to a dead worker.
CREATE TABLE queue_workers (
  worker_id     text PRIMARY KEY,
  host          text NOT NULL,
  pid           integer NOT NULL,
  lease_seconds double precision NOT NULL,
  -- the graphile-worker pool id its jobs are locked by (set once the pool runs): what a sweeper unlocks
  pool_id       text,
  started_at    timestamptz NOT NULL DEFAULT now(),
  heartbeat_at  timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 3,
    name: 'knowledge bases: bases, documents by content hash, chunks with full-text vectors and embeddings',
    sql: `
CREATE TABLE kb_bases (
  id              text PRIMARY KEY,
  name            text,
  embedding_model text,
  embedding_dims  integer,
  chunk_tokens    integer NOT NULL,
  chunk_overlap   integer NOT NULL,
  version         integer NOT NULL DEFAULT 0,
  created_at      double precision NOT NULL,
  updated_at      double precision NOT NULL
);

CREATE TABLE kb_documents (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  base_id       text NOT NULL REFERENCES kb_bases (id) ON DELETE CASCADE,
  source        text NOT NULL,
  origin        text NOT NULL,
  content_hash  text NOT NULL,
  metadata      jsonb NOT NULL,
  version       integer NOT NULL,
  bytes         bigint NOT NULL,
  chunk_count   integer NOT NULL,
  created_at    double precision NOT NULL,
  updated_at    double precision NOT NULL,
  UNIQUE (base_id, source)
);

-- 'simple': lower-cased words without stemming or stop words, as the SQLite base's unicode61 tokenizer.
CREATE TABLE kb_chunks (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  document_id bigint NOT NULL REFERENCES kb_documents (id) ON DELETE CASCADE,
  base_id     text NOT NULL,
  ordinal     integer NOT NULL,
  text        text NOT NULL,
  tokens      integer NOT NULL,
  embedding   real[],
  tsv         tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED
);
CREATE INDEX kb_chunks_tsv ON kb_chunks USING gin (tsv);
CREATE INDEX kb_chunks_base ON kb_chunks (base_id);
CREATE INDEX kb_chunks_document ON kb_chunks (document_id);
`,
  },
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

export type AppliedMigration = { version: number; name: string };

/**
 * Brings the database to PG_SCHEMA_VERSION and returns the migrations this call applied (none when
 * another process did them first). Each migration commits in its own transaction with its record.
 */
export async function migratePostgres(db: PgStoreDb): Promise<AppliedMigration[]> {
  let client;
  try {
    client = await db.pool.connect();
  } catch (err) {
    throw toPgStoreError(err, db.url, 'connecting to migrate the schema');
  }
  const q = new PgQuery(client);
  let locked = false;
  try {
    await q.exec('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    locked = true;
    await q.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at double precision NOT NULL)');
    const done = new Set((await q.rows('SELECT version FROM schema_migrations')).map((r) => num(r, 'version')));
    const newest = Math.max(0, ...done);
    if (newest > PG_SCHEMA_VERSION) {
      throw new LbotError(
        'store.unavailable',
        `${redactUrl(db.url)}: the database has schema version ${newest}, newer than the ${PG_SCHEMA_VERSION} this lbot knows; upgrade lbot`,
        { details: { url: redactUrl(db.url), schema_version: newest } },
      );
    }
    const applied: AppliedMigration[] = [];
    for (const m of PG_MIGRATIONS) {
      if (done.has(m.version)) continue;
      await q.exec('BEGIN');
      try {
        await q.exec(m.sql);
        await q.exec('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, db.now()]);
        await q.exec('COMMIT');
      } catch (err) {
        await q.exec('ROLLBACK').catch(() => 0);
        throw err;
      }
      applied.push({ version: m.version, name: m.name });
    }
    return applied;
  } catch (err) {
    throw toPgStoreError(err, db.url, 'migrating the schema');
  } finally {
    if (locked) await q.exec('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => 0);
    client.release();
  }
}

/** Versions recorded as applied, oldest first; none for a database lbot never migrated. */
export async function appliedVersions(db: PgStoreDb): Promise<AppliedMigration[]> {
  return db.run('reading the schema version', async (q) => {
    const table = await q.row("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_migrations'");
    if (table === null || num(table, 'n') === 0) return [];
    return (await q.rows('SELECT version, name FROM schema_migrations ORDER BY version')).map((r) => ({ version: num(r, 'version'), name: text(r, 'name') }));
  });
}
