// Run records and their append-only audit (proxy calls, notices, results, state writes, warnings) on PostgreSQL.
import { LbotError } from '../../../core/errors.js';
import { tryParseJson } from '../../../core/json.js';
import type { DeliveredLine } from '../../../core/protocol/result-line.js';
import type { AsyncRunStore } from '../../../core/stores/async.js';
import { ApiCallAuditSchema } from '../../../core/stores/run-schemas.js';
import { numOrNull, text, textOrNull } from '../../../core/stores/sqlite/columns.js';
import { collect, emptyAudit, INTERRUPTED_MESSAGE, toRunRecord, type Audit, type ItemKind } from '../../../core/stores/sqlite/runs.js';
import type { ApiCallAudit, ObservedNotice, RunError, RunOwner, RunRecord, RunStatus } from '../../../core/stores/types.js';
import { isForeignKeyViolation, isUniqueViolation, type PgQuery, type PgStoreDb } from './connection.js';

type RunStart = Pick<RunRecord, 'run_id' | 'runner_id' | 'binding_id' | 'event_id' | 'conversation_id' | 'started_at'> & { owner?: RunOwner };

function unknownRun(run_id: string): LbotError {
  return new LbotError('not_found', `run ${run_id} does not exist in the run store`, { details: { run_id } });
}

/** RunStore backed by the `runs` and `run_items` tables. */
export class PgRunStore implements AsyncRunStore {
  constructor(readonly db: PgStoreDb) {}

  create(run: RunStart): Promise<void> {
    return this.db.run('recording a run', async (q) => {
      try {
        await q.exec(
          `INSERT INTO runs (run_id, runner_id, binding_id, event_id, conversation_id, status, started_at, owner_pid, owner_host)
           VALUES ($1, $2, $3, $4, $5, 'running', $6, $7, $8)`,
          [run.run_id, run.runner_id, run.binding_id, run.event_id, run.conversation_id, run.started_at, run.owner?.pid ?? null, run.owner?.host ?? null],
        );
      } catch (err) {
        if (isUniqueViolation(err))
          throw new LbotError('invalid_argument', `run ${run.run_id} already exists; run ids must be unique`, { details: { run_id: run.run_id } });
        throw err;
      }
    });
  }

  async finish(run_id: string, status: Exclude<RunStatus, 'running'>, error: RunError | null, ended_at: number, stderr_tail: string | null): Promise<void> {
    const changes = await this.db.run('finishing a run', (q) =>
      q.exec('UPDATE runs SET status = $1, error_json = $2, ended_at = $3, stderr_tail = $4 WHERE run_id = $5', [
        status,
        error === null ? null : JSON.stringify(error),
        ended_at,
        stderr_tail,
        run_id,
      ]),
    );
    if (changes === 0) throw unknownRun(run_id);
  }

  /** One INSERT of many audit items, in order; an unknown run fails the whole batch with not_found naming it. */
  async #insert(q: PgQuery, items: ReadonlyArray<{ run_id: string; kind: ItemKind; body: unknown }>): Promise<void> {
    try {
      await q.exec(
        `INSERT INTO run_items (run_id, kind, body_json)
         SELECT r, k, b FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS t (r, k, b, n) ORDER BY n`,
        [items.map((i) => i.run_id), items.map((i) => i.kind), items.map((i) => JSON.stringify(i.body))],
      );
    } catch (err) {
      if (!isForeignKeyViolation(err)) throw err;
      const ids = [...new Set(items.map((i) => i.run_id))];
      const known = new Set(
        (await this.db.run('reading runs', (r) => r.rows('SELECT run_id FROM runs WHERE run_id = ANY($1::text[])', [ids]))).map((r) => text(r, 'run_id')),
      );
      throw unknownRun(ids.find((id) => !known.has(id)) ?? ids[0] ?? '');
    }
  }

  #add(run_id: string, kind: ItemKind, body: unknown): Promise<void> {
    return this.db.run('appending to a run audit', (q) => this.#insert(q, [{ run_id, kind, body }]));
  }

  addApiCall(run_id: string, call: ApiCallAudit): Promise<void> {
    return this.#add(run_id, 'api_call', call);
  }

  async addApiCalls(entries: ReadonlyArray<{ run_id: string; call: ApiCallAudit }>): Promise<void> {
    if (entries.length === 0) return;
    await this.db.run('appending to run audits', (q) =>
      this.#insert(
        q,
        entries.map((e) => ({ run_id: e.run_id, kind: 'api_call', body: e.call })),
      ),
    );
  }

  async addUnattributedCall(call: ApiCallAudit): Promise<void> {
    await this.db.run('appending to the audit of unattributed calls', (q) =>
      q.exec('INSERT INTO unattributed_calls (caller_plugin, body_json) VALUES ($1, $2)', [call.caller_plugin, JSON.stringify(call)]),
    );
  }

  unattributedCalls(opts: { caller_plugin?: string; limit?: number } = {}): Promise<ApiCallAudit[]> {
    const params: unknown[] = [];
    let sql = 'SELECT body_json FROM unattributed_calls';
    if (opts.caller_plugin !== undefined) {
      params.push(opts.caller_plugin);
      sql += ' WHERE caller_plugin = $1';
    }
    sql += ' ORDER BY id DESC';
    if (opts.limit !== undefined) {
      params.push(Math.max(0, Math.trunc(opts.limit)));
      sql += ` LIMIT $${params.length}`;
    }
    return this.db.run('reading the audit of unattributed calls', async (q) => {
      const out: ApiCallAudit[] = [];
      for (const row of await q.rows(sql, params)) {
        const parsed = ApiCallAuditSchema.safeParse(tryParseJson(text(row, 'body_json')));
        if (parsed.success) out.push(parsed.data);
      }
      return out.reverse();
    });
  }

  addObserved(run_id: string, notice: ObservedNotice): Promise<void> {
    return this.#add(run_id, 'observed', notice);
  }

  addResult(run_id: string, result: DeliveredLine): Promise<void> {
    return this.#add(run_id, 'result', result);
  }

  addStateWrite(run_id: string, write: { scope: string; key: string }): Promise<void> {
    return this.#add(run_id, 'state_write', write);
  }

  addWarning(run_id: string, warning: string): Promise<void> {
    return this.#add(run_id, 'warning', warning);
  }

  get(run_id: string): Promise<RunRecord | null> {
    return this.db.run('reading a run', async (q) => {
      const row = await q.row('SELECT * FROM runs WHERE run_id = $1', [run_id]);
      if (!row) return null;
      const audit = emptyAudit();
      for (const item of await q.rows('SELECT kind, body_json FROM run_items WHERE run_id = $1 ORDER BY id', [run_id])) {
        collect(audit, text(item, 'kind'), tryParseJson(text(item, 'body_json')));
      }
      return toRunRecord(row, audit);
    });
  }

  list(opts: { limit?: number } = {}): Promise<RunRecord[]> {
    return this.db.run('listing runs', async (q) => {
      const rows =
        opts.limit === undefined
          ? await q.rows('SELECT * FROM runs ORDER BY id')
          : await q.rows('SELECT * FROM (SELECT * FROM runs ORDER BY id DESC LIMIT $1) r ORDER BY id', [Math.max(0, Math.trunc(opts.limit))]);
      if (rows.length === 0) return [];
      const audits = new Map<string, Audit>(rows.map((r) => [text(r, 'run_id'), emptyAudit()]));
      for (const item of await q.rows('SELECT run_id, kind, body_json FROM run_items WHERE run_id = ANY($1::text[]) ORDER BY id', [[...audits.keys()]])) {
        const audit = audits.get(text(item, 'run_id'));
        if (audit) collect(audit, text(item, 'kind'), tryParseJson(text(item, 'body_json')));
      }
      return rows.map((r) => toRunRecord(r, audits.get(text(r, 'run_id')) ?? emptyAudit()));
    });
  }

  running(): Promise<Array<{ run_id: string; owner: RunOwner | null }>> {
    return this.db.run('listing running runs', async (q) =>
      (await q.rows(`SELECT run_id, owner_pid, owner_host FROM runs WHERE status = 'running' ORDER BY id`)).map((row) => {
        const pid = numOrNull(row, 'owner_pid');
        const host = textOrNull(row, 'owner_host');
        return { run_id: text(row, 'run_id'), owner: pid !== null && host !== null ? { pid, host } : null };
      }),
    );
  }

  async markInterrupted(run_ids: readonly string[]): Promise<void> {
    if (run_ids.length === 0) return;
    await this.db.run('marking runs interrupted', (q) =>
      q.exec(
        `UPDATE runs SET status = 'interrupted', ended_at = $1,
           error_json = json_build_object('code', 'host.interrupted', 'message', $2::text, 'retryable', true,
             'details', json_build_object('owner_pid', owner_pid, 'owner_host', owner_host))::text
         WHERE status = 'running' AND run_id = ANY($3::text[])`,
        [this.db.now(), INTERRUPTED_MESSAGE, [...run_ids]],
      ),
    );
  }
}
