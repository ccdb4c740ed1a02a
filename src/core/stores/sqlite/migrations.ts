// Versioned schema of lbot.db: an append-only list of migrations, applied once under BEGIN IMMEDIATE.
import type Database from 'better-sqlite3';
import { StateScopeSchema } from '../../protocol/binding.js';
import { migrateLegacyScopeKey } from '../state-scope-key.js';
import { textOrNull, rowOrNull, rowsOf, text, num } from './columns.js';
import { storeUnavailable } from './store-errors.js';
import { signBits } from './vector-functions.js';

/** `sql` runs first, then `up` (a data rewrite SQL alone cannot express), in the same transaction. */
export type Migration = { version: number; name: string; sql: string; up?: (db: Database.Database) => void };

/**
 * Version 3: state scope keys become escaped (state-scope-key.ts). An old key is rewritten when its row's
 * identity columns rebuild it exactly or it has exactly one reading; any other key stays as it was
 * (listed by `lbot state list`, no longer reached by runs).
 */
/** Migration 7: the sign bits of every vector stored before the table existed. */
function backfillChunkBits(db: Database.Database): void {
  const insert = db.prepare('INSERT INTO kb_chunk_bits (chunk_id, base_id, bits) VALUES (?, ?, ?)');
  for (const row of rowsOf(db.prepare('SELECT id, base_id, embedding FROM kb_chunks WHERE embedding IS NOT NULL').all())) {
    const embedding = row.embedding;
    if (Buffer.isBuffer(embedding)) insert.run(num(row, 'id'), text(row, 'base_id'), signBits(embedding));
  }
}

function escapeStateScopeKeys(db: Database.Database): void {
  const update = db.prepare('UPDATE OR IGNORE agent_runner_state SET scope_key = ? WHERE id = ?');
  const rows = rowsOf(
    db
      .prepare(
        'SELECT id, scope, scope_key, runner_id, binding_identity, conversation_id, thread_id, actor_type, actor_id, subject_type, subject_id FROM agent_runner_state',
      )
      .all(),
  );
  for (const row of rows) {
    const scope = StateScopeSchema.safeParse(text(row, 'scope'));
    if (!scope.success) continue;
    const next = migrateLegacyScopeKey(scope.data, text(row, 'scope_key'), {
      runner_id: text(row, 'runner_id'),
      binding_identity: text(row, 'binding_identity'),
      conversation_id: textOrNull(row, 'conversation_id'),
      thread_id: textOrNull(row, 'thread_id'),
      actor_type: textOrNull(row, 'actor_type'),
      actor_id: textOrNull(row, 'actor_id'),
      subject_type: textOrNull(row, 'subject_type'),
      subject_id: textOrNull(row, 'subject_id'),
    });
    if (next !== null) update.run(next, num(row, 'id'));
  }
}

/**
 * Never edit a released migration; add a new one. `PRAGMA user_version` holds the applied version
 * and `schema_migrations` records when each step ran.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'event log, transcript with trigram search, runs, state, storage, artifacts',
    sql: `
CREATE TABLE event_log (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id        TEXT NOT NULL,
  event_type      TEXT NOT NULL,
  event_time      REAL,
  source          TEXT NOT NULL,
  bot_id          TEXT,
  workspace_id    TEXT,
  conversation_id TEXT,
  thread_id       TEXT,
  actor_type      TEXT,
  actor_id        TEXT,
  actor_name      TEXT,
  subject_type    TEXT,
  subject_id      TEXT,
  input_summary   TEXT,
  input_json      TEXT,
  raw_ref         TEXT,
  run_id          TEXT,
  runner_id       TEXT,
  created_at      REAL NOT NULL,
  metadata_json   TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX event_log_conversation ON event_log (conversation_id, id);
CREATE INDEX event_log_event_id ON event_log (event_id, id);
CREATE INDEX event_log_type ON event_log (event_type, id);
CREATE INDEX event_log_run ON event_log (run_id);
CREATE INDEX event_log_bot ON event_log (bot_id);

CREATE TABLE transcript (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  transcript_id      TEXT NOT NULL UNIQUE,
  event_id           TEXT NOT NULL,
  conversation_id    TEXT NOT NULL,
  thread_id          TEXT,
  role               TEXT NOT NULL,
  item_type          TEXT NOT NULL DEFAULT 'message',
  content            TEXT,
  content_json       TEXT,
  artifact_refs_json TEXT NOT NULL DEFAULT '[]',
  run_id             TEXT,
  runner_id          TEXT,
  created_at         REAL NOT NULL,
  metadata_json      TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX transcript_conversation ON transcript (conversation_id, id);
CREATE INDEX transcript_event ON transcript (event_id);
CREATE INDEX transcript_run ON transcript (run_id);

-- Search index: trigram tokens of content plus a 3-character tag per conversation, so one MATCH
-- intersects "this conversation" with "these trigrams" inside FTS5 (see transcript-search.ts).
CREATE VIRTUAL TABLE transcript_fts USING fts5 (
  conv_tag, content,
  content = '', contentless_delete = 1, tokenize = 'trigram case_sensitive 0'
);

CREATE TABLE runs (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id          TEXT NOT NULL UNIQUE,
  runner_id       TEXT NOT NULL,
  binding_id      TEXT NOT NULL,
  event_id        TEXT NOT NULL,
  conversation_id TEXT,
  status          TEXT NOT NULL CHECK (status IN ('running','completed','failed','timed_out','cancelled','interrupted')),
  error_json      TEXT,
  started_at      REAL NOT NULL,
  ended_at        REAL,
  stderr_tail     TEXT
);
CREATE INDEX runs_status ON runs (status);

-- Append-only audit of a run: one cheap INSERT per proxy call, notice, result, state write or warning.
CREATE TABLE run_items (
  id        INTEGER PRIMARY KEY,
  run_id    TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  kind      TEXT NOT NULL CHECK (kind IN ('api_call','observed','result','state_write','warning')),
  body_json TEXT NOT NULL
);
CREATE INDEX run_items_run ON run_items (run_id, id);

CREATE TABLE agent_runner_state (
  id               INTEGER PRIMARY KEY,
  runner_id        TEXT NOT NULL,
  binding_identity TEXT NOT NULL,
  scope            TEXT NOT NULL,
  scope_key        TEXT NOT NULL,
  state_key        TEXT NOT NULL,
  value_json       TEXT,
  bot_id           TEXT,
  workspace_id     TEXT,
  conversation_id  TEXT,
  thread_id        TEXT,
  actor_type       TEXT,
  actor_id         TEXT,
  subject_type     TEXT,
  subject_id       TEXT,
  created_at       REAL NOT NULL,
  updated_at       REAL NOT NULL,
  UNIQUE (scope_key, state_key)
);
CREATE INDEX agent_runner_state_owner ON agent_runner_state (runner_id, binding_identity);
CREATE INDEX agent_runner_state_scope ON agent_runner_state (scope);

CREATE TABLE binary_storage (
  id          INTEGER PRIMARY KEY,
  owner_type  TEXT NOT NULL,
  owner       TEXT NOT NULL,
  storage_key TEXT NOT NULL,
  value       BLOB NOT NULL,
  created_at  REAL NOT NULL,
  updated_at  REAL NOT NULL,
  UNIQUE (owner_type, owner, storage_key)
);

CREATE TABLE agent_artifact (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  artifact_id     TEXT NOT NULL UNIQUE,
  artifact_type   TEXT NOT NULL,
  mime_type       TEXT,
  name            TEXT,
  size_bytes      INTEGER,
  sha256          TEXT,
  source          TEXT NOT NULL,
  storage_key     TEXT,
  storage_type    TEXT NOT NULL DEFAULT 'binary_storage'
                  CHECK (storage_type IN ('binary_storage','url','platform_ref','metadata_only')),
  conversation_id TEXT,
  run_id          TEXT,
  runner_id       TEXT,
  bot_id          TEXT,
  workspace_id    TEXT,
  created_at      REAL NOT NULL,
  expires_at      REAL,
  metadata_json   TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX agent_artifact_conversation ON agent_artifact (conversation_id);
CREATE INDEX agent_artifact_run ON agent_artifact (run_id);
CREATE INDEX agent_artifact_sha256 ON agent_artifact (sha256);
`,
  },
  {
    version: 2,
    name: 'run owners',
    sql: `
ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
ALTER TABLE runs ADD COLUMN owner_host TEXT;
`,
  },
  { version: 3, name: 'escaped state scope keys', sql: '', up: escapeStateScopeKeys },
  {
    version: 4,
    name: 'audit of proxy calls no run can be named for',
    sql: `
-- Refused calls that name no run of their plugin while it has none live (unknown or foreign run ids).
CREATE TABLE unattributed_calls (
  id            INTEGER PRIMARY KEY,
  caller_plugin TEXT NOT NULL,
  body_json     TEXT NOT NULL
);
CREATE INDEX unattributed_calls_plugin ON unattributed_calls (caller_plugin, id);
`,
  },
  {
    version: 5,
    name: 'outbox of platform replies, poll offsets, schedule ticks',
    sql: `
-- Every outbound platform message, recorded before it is sent (docs/delivery.md).
CREATE TABLE outbox (
  id                  INTEGER PRIMARY KEY,
  idempotency_key     TEXT NOT NULL UNIQUE,
  account             TEXT NOT NULL,
  platform            TEXT NOT NULL,
  op                  TEXT NOT NULL CHECK (op IN ('send','edit')),
  run_id              TEXT,
  event_id            TEXT,
  conversation_id     TEXT,
  target_json         TEXT NOT NULL,
  text                TEXT NOT NULL,
  -- an edit waits for the send it edits (its platform message id)
  edits_key           TEXT,
  status              TEXT NOT NULL CHECK (status IN ('pending','sending','delivered','failed')),
  attempts            INTEGER NOT NULL DEFAULT 0,
  next_attempt_at     REAL NOT NULL,
  owner_pid           INTEGER,
  owner_host          TEXT,
  platform_message_id TEXT,
  error_json          TEXT,
  created_at          REAL NOT NULL,
  updated_at          REAL NOT NULL
);
CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
CREATE INDEX outbox_run ON outbox (run_id);

-- Long-polling cursors (Telegram getUpdates offsets), per account.
CREATE TABLE poll_offsets (
  account    TEXT PRIMARY KEY,
  next_offset INTEGER NOT NULL,
  updated_at REAL NOT NULL
);

-- One row per schedule tick that fired: the primary key makes a tick fire once, whoever claims it.
CREATE TABLE schedule_ticks (
  schedule   TEXT NOT NULL,
  tick_at    REAL NOT NULL,
  owner_pid  INTEGER,
  owner_host TEXT,
  run_ids_json TEXT NOT NULL DEFAULT '[]',
  created_at REAL NOT NULL,
  PRIMARY KEY (schedule, tick_at)
);
`,
  },
  {
    version: 6,
    name: 'knowledge bases, documents and chunks with FTS5',
    sql: `
-- A knowledge base built with \`lbot kb\` (docs/knowledge.md); version counts completed ingestions.
CREATE TABLE kb_bases (
  id              TEXT PRIMARY KEY,
  name            TEXT,
  embedding_model TEXT,
  embedding_dims  INTEGER,
  chunk_tokens    INTEGER NOT NULL,
  chunk_overlap   INTEGER NOT NULL,
  version         INTEGER NOT NULL DEFAULT 0,
  created_at      REAL NOT NULL,
  updated_at      REAL NOT NULL
);
-- One row per source file; a re-add with the same content_hash leaves it (and its chunks) alone.
CREATE TABLE kb_documents (
  id            INTEGER PRIMARY KEY,
  base_id       TEXT NOT NULL REFERENCES kb_bases (id) ON DELETE CASCADE,
  source        TEXT NOT NULL,
  origin        TEXT NOT NULL,
  content_hash  TEXT NOT NULL,
  metadata_json TEXT NOT NULL,
  version       INTEGER NOT NULL,
  bytes         INTEGER NOT NULL,
  chunk_count   INTEGER NOT NULL,
  created_at    REAL NOT NULL,
  updated_at    REAL NOT NULL,
  UNIQUE (base_id, source)
);
-- embedding: float32 little-endian, embedding_dims long (sqlite-vec's vector format).
CREATE TABLE kb_chunks (
  id          INTEGER PRIMARY KEY,
  document_id INTEGER NOT NULL REFERENCES kb_documents (id) ON DELETE CASCADE,
  base_id     TEXT NOT NULL,
  ordinal     INTEGER NOT NULL,
  text        TEXT NOT NULL,
  tokens      INTEGER NOT NULL,
  embedding   BLOB
);
CREATE INDEX kb_chunks_document ON kb_chunks (document_id, ordinal);
CREATE INDEX kb_chunks_base ON kb_chunks (base_id);
CREATE VIRTUAL TABLE kb_chunks_fts USING fts5 (text, content = 'kb_chunks', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER kb_chunks_ai AFTER INSERT ON kb_chunks BEGIN
  INSERT INTO kb_chunks_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER kb_chunks_ad AFTER DELETE ON kb_chunks BEGIN
  INSERT INTO kb_chunks_fts (kb_chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
`,
  },
  {
    version: 7,
    name: 'sign bits of knowledge vectors',
    sql: `
-- One sign bit per dimension of a chunk's vector (docs/knowledge.md, Speed): scanned by Hamming distance
-- for candidates that are then ranked by exact cosine.
CREATE TABLE kb_chunk_bits (
  chunk_id INTEGER PRIMARY KEY,
  base_id  TEXT NOT NULL,
  bits     BLOB NOT NULL
);
CREATE INDEX kb_chunk_bits_base ON kb_chunk_bits (base_id);
CREATE TRIGGER kb_chunks_bits_ad AFTER DELETE ON kb_chunks BEGIN
  DELETE FROM kb_chunk_bits WHERE chunk_id = old.id;
END;
`,
    up: backfillChunkBits,
  },
  {
    version: 8,
    name: 'http bot idempotency keys and session generations',
    sql: `
-- One row per idempotency key an HTTP bot accepted (docs/http-bot.md): a second request with the key is a duplicate.
CREATE TABLE http_bot_keys (
  bot        TEXT NOT NULL,
  key        TEXT NOT NULL,
  event_id   TEXT NOT NULL,
  created_at REAL NOT NULL,
  PRIMARY KEY (bot, key)
);
CREATE INDEX http_bot_keys_created ON http_bot_keys (created_at);
-- A session's generation: /bots/{bot}/reset moves it on, and with it the conversation its messages go to.
CREATE TABLE http_bot_sessions (
  bot        TEXT NOT NULL,
  session_id TEXT NOT NULL,
  generation INTEGER NOT NULL,
  updated_at REAL NOT NULL,
  PRIMARY KEY (bot, session_id)
);
`,
  },
  {
    version: 9,
    name: 'knowledge base generations',
    sql: `
-- Moves on with every write to a base's chunks, so a reader's in-memory copy of its sign bits knows it is stale.
ALTER TABLE kb_bases ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
`,
  },
];

export const SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

function userVersion(db: Database.Database): number {
  const v = db.pragma('user_version', { simple: true });
  return typeof v === 'number' ? v : 0;
}

/** The schema version of an open database and the steps recorded as applied, oldest first (reads only). */
export function sqliteSchema(db: Database.Database): { version: number; applied: { version: number; name: string }[] } {
  const table = rowOrNull(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get());
  const present = table !== null && num(table, 'n') > 0;
  const applied = present
    ? rowsOf(db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all()).map((r) => ({
        version: num(r, 'version'),
        name: text(r, 'name'),
      }))
    : [];
  return { version: userVersion(db), applied };
}

/**
 * Brings the schema to SCHEMA_VERSION. Runs under BEGIN IMMEDIATE even when nothing is pending:
 * two processes opening a fresh data dir at once serialize here (the second sees the work done).
 * Rewriting user_version is the write probe: SQLite opens a read-only file without complaint and
 * even grants BEGIN IMMEDIATE, so only a real write proves the database can be written now rather
 * than at the first append. With nothing to migrate the probe is rolled back and leaves no trace.
 */
export function migrate(db: Database.Database, file: string, nowS: number): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    const current = userVersion(db);
    if (current > SCHEMA_VERSION) {
      throw storeUnavailable(file, `the database has schema version ${current}, newer than the ${SCHEMA_VERSION} this lbot knows; upgrade lbot`);
    }
    db.pragma(`user_version = ${current}`);
    if (current === SCHEMA_VERSION) {
      db.exec('ROLLBACK');
      return;
    }
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)');
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      if (m.sql) db.exec(m.sql);
      m.up?.(db);
      record.run(m.version, m.name, nowS);
    }
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
    db.exec('COMMIT');
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}
