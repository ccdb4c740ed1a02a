// Run records and their append-only audit (proxy calls, notices, results, state writes, warnings) on SQLite.
import { LbotError } from '../../errors.js';
import { ErrorValueSchema } from '../../protocol/error-value.js';
import { tryParseJson } from '../../json.js';
import { storedDeliveredLine, type DeliveredLine } from '../../protocol/result-line.js';
import type { RunOwner, ApiCallAudit, ObservedNotice, RunError, RunRecord, RunStatus, RunStore } from '../types.js';
import { num, numOrNull, rowOrNull, rowsOf, text, textOrNull, type Row } from './columns.js';
import type { StoreDb } from './connection.js';
import { isForeignKeyViolation, isUniqueViolation } from './store-errors.js';
import { ApiCallAuditSchema, ObservedNoticeSchema, RunStatusSchema, StateWriteSchema } from '../run-schemas.js';

export type ItemKind = 'api_call' | 'observed' | 'result' | 'state_write' | 'warning';

export type Audit = Pick<RunRecord, 'api_calls' | 'observed' | 'results' | 'state_writes' | 'warnings'>;

export function emptyAudit(): Audit {
  return { api_calls: [], observed: [], results: [], state_writes: [], warnings: [] };
}

/** Adds one stored audit item to `audit`; an item that no longer parses is skipped rather than failing the read. */
export function collect(audit: Audit, kind: string, body: unknown): void {
  switch (kind) {
    case 'api_call': {
      const r = ApiCallAuditSchema.safeParse(body);
      if (r.success) audit.api_calls.push(r.data);
      return;
    }
    case 'observed': {
      const r = ObservedNoticeSchema.safeParse(body);
      if (r.success) audit.observed.push(r.data);
      return;
    }
    case 'result': {
      const line = storedDeliveredLine(body);
      if (line) audit.results.push(line);
      return;
    }
    case 'state_write': {
      const r = StateWriteSchema.safeParse(body);
      if (r.success) audit.state_writes.push(r.data);
      return;
    }
    case 'warning':
      if (typeof body === 'string') audit.warnings.push(body);
      return;
  }
}

/** The error of a run whose host process ended before the run did: a host failure, not the runner's. */
export const INTERRUPTED_MESSAGE = 'the lbot process running this run ended (crashed or was killed) before the run finished; the run can be retried';

function runError(row: Row): RunError | null {
  const raw = textOrNull(row, 'error_json');
  if (raw === null) return null;
  const r = ErrorValueSchema.safeParse(tryParseJson(raw));
  return r.success ? r.data : { code: 'unknown', message: raw, retryable: false, details: {} };
}

export function toRunRecord(row: Row, audit: Audit): RunRecord {
  const status = RunStatusSchema.safeParse(text(row, 'status'));
  return {
    run_id: text(row, 'run_id'),
    runner_id: text(row, 'runner_id'),
    binding_id: text(row, 'binding_id'),
    event_id: text(row, 'event_id'),
    conversation_id: textOrNull(row, 'conversation_id'),
    status: status.success ? status.data : 'failed',
    error: runError(row),
    started_at: num(row, 'started_at'),
    ended_at: numOrNull(row, 'ended_at'),
    stderr_tail: textOrNull(row, 'stderr_tail'),
    ...audit,
  };
}

/** RunStore backed by the `runs` and `run_items` tables. */
export class SqliteRunStore implements RunStore {
  constructor(readonly store: StoreDb) {}

  create(run: Pick<RunRecord, 'run_id' | 'runner_id' | 'binding_id' | 'event_id' | 'conversation_id' | 'started_at'> & { owner?: RunOwner }): void {
    this.store.run('recording a run', () => {
      try {
        this.store
          .prepare(
            `INSERT INTO runs (run_id, runner_id, binding_id, event_id, conversation_id, status, started_at, owner_pid, owner_host)
             VALUES (@run_id, @runner_id, @binding_id, @event_id, @conversation_id, 'running', @started_at, @owner_pid, @owner_host)`,
          )
          .run({
            run_id: run.run_id,
            runner_id: run.runner_id,
            binding_id: run.binding_id,
            event_id: run.event_id,
            conversation_id: run.conversation_id,
            started_at: run.started_at,
            owner_pid: run.owner?.pid ?? null,
            owner_host: run.owner?.host ?? null,
          });
      } catch (err) {
        if (isUniqueViolation(err))
          throw new LbotError('invalid_argument', `run ${run.run_id} already exists; run ids must be unique`, { details: { run_id: run.run_id } });
        throw err;
      }
    });
  }

  finish(run_id: string, status: Exclude<RunStatus, 'running'>, error: RunError | null, ended_at: number, stderr_tail: string | null): void {
    const changes = this.store.run(
      'finishing a run',
      () =>
        this.store
          .prepare('UPDATE runs SET status = ?, error_json = ?, ended_at = ?, stderr_tail = ? WHERE run_id = ?')
          .run(status, error === null ? null : JSON.stringify(error), ended_at, stderr_tail, run_id).changes,
    );
    if (changes === 0) throw this.#unknown(run_id);
  }

  #unknown(run_id: string): LbotError {
    return new LbotError('not_found', `run ${run_id} does not exist in the run store`, { details: { run_id } });
  }

  #add(run_id: string, kind: ItemKind, body: unknown): void {
    this.store.run('appending to a run audit', () => {
      try {
        this.store.prepare('INSERT INTO run_items (run_id, kind, body_json) VALUES (?, ?, ?)').run(run_id, kind, JSON.stringify(body));
      } catch (err) {
        if (isForeignKeyViolation(err)) throw this.#unknown(run_id);
        throw err;
      }
    });
  }

  addApiCall(run_id: string, call: ApiCallAudit): void {
    this.#add(run_id, 'api_call', call);
  }

  addApiCalls(entries: ReadonlyArray<{ run_id: string; call: ApiCallAudit }>): void {
    if (entries.length === 0) return;
    this.store.write('appending to run audits', () => {
      const insert = this.store.prepare('INSERT INTO run_items (run_id, kind, body_json) VALUES (?, ?, ?)');
      for (const { run_id, call } of entries) {
        try {
          insert.run(run_id, 'api_call', JSON.stringify(call));
        } catch (err) {
          if (isForeignKeyViolation(err)) throw this.#unknown(run_id);
          throw err;
        }
      }
    });
  }

  addUnattributedCall(call: ApiCallAudit): void {
    this.store.write('appending to the audit of unattributed calls', () => {
      this.store.prepare('INSERT INTO unattributed_calls (caller_plugin, body_json) VALUES (?, ?)').run(call.caller_plugin, JSON.stringify(call));
    });
  }

  unattributedCalls(opts: { caller_plugin?: string; limit?: number } = {}): ApiCallAudit[] {
    const where = opts.caller_plugin === undefined ? '' : 'WHERE caller_plugin = ?';
    const params: unknown[] = opts.caller_plugin === undefined ? [] : [opts.caller_plugin];
    let sql = `SELECT body_json FROM unattributed_calls ${where} ORDER BY id DESC`;
    if (opts.limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(Math.max(0, Math.trunc(opts.limit)));
    }
    return this.store.run('reading the audit of unattributed calls', () => {
      const out: ApiCallAudit[] = [];
      for (const row of rowsOf(this.store.prepare(sql).all(...params))) {
        const parsed = ApiCallAuditSchema.safeParse(tryParseJson(text(row, 'body_json')));
        if (parsed.success) out.push(parsed.data);
      }
      return out.reverse();
    });
  }

  addObserved(run_id: string, notice: ObservedNotice): void {
    this.#add(run_id, 'observed', notice);
  }

  addResult(run_id: string, result: DeliveredLine): void {
    this.#add(run_id, 'result', result);
  }

  addStateWrite(run_id: string, write: { scope: string; key: string }): void {
    this.#add(run_id, 'state_write', write);
  }

  addWarning(run_id: string, warning: string): void {
    this.#add(run_id, 'warning', warning);
  }

  get(run_id: string): RunRecord | null {
    return this.store.run('reading a run', () => {
      const row = rowOrNull(this.store.prepare('SELECT * FROM runs WHERE run_id = ?').get(run_id));
      if (!row) return null;
      const audit = emptyAudit();
      for (const item of rowsOf(this.store.prepare('SELECT kind, body_json FROM run_items WHERE run_id = ? ORDER BY id').all(run_id))) {
        collect(audit, text(item, 'kind'), tryParseJson(text(item, 'body_json')));
      }
      return toRunRecord(row, audit);
    });
  }

  list(opts: { limit?: number } = {}): RunRecord[] {
    return this.store.run('listing runs', () => {
      const rows =
        opts.limit === undefined
          ? rowsOf(this.store.prepare('SELECT * FROM runs ORDER BY id').all())
          : rowsOf(this.store.prepare('SELECT * FROM (SELECT * FROM runs ORDER BY id DESC LIMIT ?) ORDER BY id').all(Math.max(0, Math.trunc(opts.limit))));
      if (rows.length === 0) return [];
      const audits = new Map<string, Audit>(rows.map((r) => [text(r, 'run_id'), emptyAudit()]));
      const items = this.store
        .prepare('SELECT run_id, kind, body_json FROM run_items WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY id')
        .all(JSON.stringify([...audits.keys()]));
      for (const item of rowsOf(items)) {
        const audit = audits.get(text(item, 'run_id'));
        if (audit) collect(audit, text(item, 'kind'), tryParseJson(text(item, 'body_json')));
      }
      return rows.map((r) => toRunRecord(r, audits.get(text(r, 'run_id')) ?? emptyAudit()));
    });
  }

  running(): Array<{ run_id: string; owner: RunOwner | null }> {
    return this.store.run('listing running runs', () =>
      rowsOf(this.store.prepare(`SELECT run_id, owner_pid, owner_host FROM runs WHERE status = 'running'`).all()).map((row) => {
        const pid = numOrNull(row, 'owner_pid');
        const host = textOrNull(row, 'owner_host');
        return { run_id: text(row, 'run_id'), owner: pid !== null && host !== null ? { pid, host } : null };
      }),
    );
  }

  markInterrupted(run_ids: readonly string[]): void {
    if (run_ids.length === 0) return;
    this.store.run('marking runs interrupted', () => {
      this.store
        .prepare(
          `UPDATE runs SET status = 'interrupted', ended_at = ?,
             error_json = json_object('code', 'host.interrupted', 'message', ?, 'retryable', json('true'),
               'details', json_object('owner_pid', owner_pid, 'owner_host', owner_host))
           WHERE status = 'running' AND run_id IN (SELECT value FROM json_each(?))`,
        )
        .run(this.store.now(), INTERRUPTED_MESSAGE, JSON.stringify(run_ids));
    });
  }
}
