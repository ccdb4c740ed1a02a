// Taking a run's row for one attempt (docs/scale.md, "When a worker dies"). graphile-worker hands a job to one
// worker at a time; a job comes back while its row says `running` only when the worker of the earlier
// attempt stopped heartbeating and a sweeper unlocked its jobs. That attempt is then lost: the run is retried
// from scratch (its recorded rows discarded, so no result is duplicated) or failed, by policy.
import { LbotError } from '../../core/errors.js';
import { num, text, textOrNull } from '../../core/stores/sqlite/columns.js';
import type { PgQuery, PgStoreDb } from '../stores/postgres/connection.js';
import { notify, RUN_CHANGED } from './notifications.js';

export type LostPolicy = 'retry' | 'fail';

/** What a run record needs of a run that never ran (its queue row's columns). */
export type RunIdentity = { run_id: string; runner_id: string; binding_id: string; event_id: string; conversation_id: string | null };

export type Claim =
  | { kind: 'skip'; why: string }
  | { kind: 'run'; run: RunIdentity; request_json: string; attempt: number; lost: string | null }
  | { kind: 'fail'; run: RunIdentity; lost: string; recorded: boolean };

/** The rows an attempt wrote, removed before the next attempt runs the same run id. */
async function discardAttempt(q: PgQuery, run_id: string, event_id: string): Promise<void> {
  await q.exec('DELETE FROM runs WHERE run_id = $1', [run_id]); // run_items cascade
  await q.exec('DELETE FROM event_log WHERE run_id = $1', [run_id]);
  await q.exec('DELETE FROM transcript WHERE run_id = $1 OR (event_id = $2 AND run_id IS NULL)', [run_id, event_id]);
  await q.exec('DELETE FROM agent_artifact WHERE run_id = $1', [run_id]);
}

export async function claimRun(db: PgStoreDb, run_id: string, worker_id: string, policy: { onLost: LostPolicy; maxAttempts: number }): Promise<Claim> {
  return db.write('claiming a queued run', async (q) => {
    const row = await q.row('SELECT * FROM run_queue WHERE run_id = $1 FOR UPDATE', [run_id]);
    if (!row) return { kind: 'skip', why: `run ${run_id} has no queue row` };
    const status = text(row, 'status');
    if (status === 'done' || status === 'cancelled') return { kind: 'skip', why: `run ${run_id} is ${status}` };
    const attempts = num(row, 'attempts');
    const request_json = text(row, 'request_json');
    const run: RunIdentity = {
      run_id,
      runner_id: text(row, 'runner_id'),
      binding_id: text(row, 'binding_id'),
      event_id: text(row, 'event_id'),
      conversation_id: textOrNull(row, 'conversation_id'),
    };
    let lost: string | null = null;
    if (status === 'running') {
      const record = await q.row('SELECT status FROM runs WHERE run_id = $1', [run_id]);
      const recorded = record ? text(record, 'status') : null;
      // It ended and was recorded; only marking the row done was lost with the worker.
      if (recorded !== null && recorded !== 'running' && recorded !== 'interrupted') {
        await q.exec(`UPDATE run_queue SET status = 'done', ended_at = $2 WHERE run_id = $1`, [run_id, db.now()]);
        return { kind: 'skip', why: `run ${run_id} had ended (${recorded})` };
      }
      lost = `attempt ${attempts} of run ${run_id} was lost with worker ${textOrNull(row, 'worker_id') ?? '?'} (it stopped heartbeating)`;
      await q.exec('UPDATE run_queue SET last_error = $2 WHERE run_id = $1', [run_id, lost]);
      if (policy.onLost === 'fail' || attempts >= policy.maxAttempts) return { kind: 'fail', run, lost, recorded: recorded !== null };
      await discardAttempt(q, run_id, text(row, 'event_id'));
    }
    await q.exec(`UPDATE run_queue SET status = 'running', attempts = attempts + 1, worker_id = $2, started_at = $3 WHERE run_id = $1`, [
      run_id,
      worker_id,
      db.now(),
    ]);
    return { kind: 'run', run, request_json, attempt: attempts + 1, lost };
  });
}

/**
 * The attempt ended (recorded as whatever it ended with): the row is done, unless a newer attempt took it
 * (`attempt` given: only the row of that attempt of this worker).
 */
export async function finishClaim(db: PgStoreDb, run_id: string, owner: { worker_id: string; attempt: number } | null): Promise<void> {
  await db.write('finishing a queued run', async (q) => {
    if (owner)
      await q.exec(`UPDATE run_queue SET status = 'done', ended_at = $4 WHERE run_id = $1 AND worker_id = $2 AND attempts = $3`, [
        run_id,
        owner.worker_id,
        owner.attempt,
        db.now(),
      ]);
    else await q.exec(`UPDATE run_queue SET status = 'done', ended_at = $2 WHERE run_id = $1`, [run_id, db.now()]);
    await notify(q, RUN_CHANGED, run_id);
  });
}

export function workerLost(lost: string, onLost: LostPolicy): LbotError {
  return new LbotError('run.worker_lost', `${lost}; not tried again (${onLost === 'fail' ? 'worker --on-lost fail' : 'worker --max-attempts reached'})`, {
    retryable: true,
    hint: 'send the event again to run it anew',
  });
}
