// `lbot worker`: claims runs from the durable run queue (graphile-worker) and runs them on a local host.
// Each worker records the graphile-worker pool its jobs are locked by, so a sweeper in any worker can unlock
// the jobs of a worker whose heartbeat stopped (forceUnlockWorkers); the run is then retried or failed by policy.
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { makeWorkerUtils, run as runGraphile, type Runner, type Task, type WorkerEvents, type WorkerUtils } from 'graphile-worker';
import { z } from 'zod';
import { LbotError } from '../../core/errors.js';
import { runErrorOf } from '../../core/host/result-processor.js';
import { text } from '../../core/stores/sqlite/columns.js';
import type { LocalHost } from '../local-host.js';
import type { RunDeliveryObserver } from '../server/run-manager.js';
import type { Config } from '../../core/config.js';
import { PgStoreDb } from '../stores/postgres/connection.js';
import { claimRun, finishClaim, workerLost, type LostPolicy, type RunIdentity } from './claim.js';
import { quietGraphileLogger } from './graphile-logger.js';
import { listen, notify, RUN_CANCEL, RUN_CHANGED, type Listener } from './notifications.js';
import { decodeRequest } from './request.js';
import { graphilePool, migrateQueue, RUN_TASK } from './schema.js';

export type QueueWorkerOptions = {
  url: string;
  local: LocalHost;
  config(): Config;
  /** Runs at once (graphile-worker slots). */
  concurrency: number;
  /** Seconds without a heartbeat after which this worker counts as dead and its runs are taken over. */
  leaseSeconds: number;
  onLost: LostPolicy;
  /** Attempts of one run before a lost one is failed instead of retried. */
  maxAttempts: number;
  delivery?: RunDeliveryObserver;
  warn(message: string): void;
  /** One line per claimed and ended run. */
  log(record: Record<string, unknown>, message: string): void;
};

export type QueueWorker = {
  worker_id: string;
  /** Resolves once the worker has stopped: 'lease_lost' when it stopped on its own, 'closed' after close(). */
  readonly stopped: Promise<'closed' | 'lease_lost'>;
  /** Stops claiming, lets the runs in flight end, and deregisters. Idempotent. */
  close(): Promise<void>;
};

const PayloadSchema = z.object({ run_id: z.string().min(1) });

/** How often a worker drops graphile-worker's queues that no job references any more. */
const QUEUE_GC_MS = 5 * 60_000;

export async function startQueueWorker(o: QueueWorkerOptions): Promise<QueueWorker> {
  const worker_id = `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const db = new PgStoreDb(o.url, { max: o.concurrency + 2 });
  const pool = graphilePool(o.url, o.concurrency * 2 + 2);
  const logger = quietGraphileLogger(o.warn);
  const controllers = new Map<string, AbortController>();
  let runner: Runner | undefined;
  let utils: WorkerUtils | undefined;
  let listener: Listener | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closing: Promise<void> | undefined;
  let lastCleanup = Date.now();
  let why: 'closed' | 'lease_lost' = 'closed';
  let stop!: (why: 'closed' | 'lease_lost') => void;
  const stopped = new Promise<'closed' | 'lease_lost'>((resolve) => (stop = resolve));

  const cancelLocal = (run_id: string) => controllers.get(run_id)?.abort();
  const policy = { onLost: o.onLost, maxAttempts: o.maxAttempts };

  /** Records a run that could not start (or was given up) so every serve instance reads how it ended. */
  const recordFailure = async (run: RunIdentity, err: unknown, recorded: boolean) => {
    const runs = o.local.stores.runs;
    if (!recorded) await runs.create({ ...run, started_at: db.now() });
    await runs.finish(run.run_id, 'failed', runErrorOf(err), db.now(), null);
  };

  const task: Task = async (payload) => {
    const { run_id } = PayloadSchema.parse(payload);
    const claim = await claimRun(db, run_id, worker_id, policy);
    if (claim.kind === 'skip') return;
    if (claim.kind === 'fail') {
      o.warn(claim.lost);
      await recordFailure(claim.run, workerLost(claim.lost, o.onLost), claim.recorded);
      return await finishClaim(db, run_id, null);
    }
    let req: ReturnType<typeof decodeRequest>;
    try {
      req = decodeRequest(claim.request_json, o.config());
    } catch (err) {
      // A row no worker can run (written by another lbot version, or altered) fails once instead of retrying.
      o.warn(`run ${run_id} cannot run: ${err instanceof Error ? err.message : String(err)}`);
      await recordFailure(claim.run, err, false);
      return await finishClaim(db, run_id, null);
    }
    const abort = new AbortController();
    controllers.set(run_id, abort);
    const changed = () => void db.run('notifying', (q) => notify(q, RUN_CHANGED, run_id)).catch(() => undefined);
    let started = false;
    o.log(
      { event: 'run.claimed', run_id, attempt: claim.attempt, conversation_id: req.event.conversation_id },
      `run ${run_id} claimed (attempt ${claim.attempt})`,
    );
    try {
      const outcome = await o.local.host.run({
        ...req,
        run_id,
        signal: abort.signal,
        onStarted: () => {
          started = true;
          if (claim.lost)
            void o.local.stores.runs.addWarning(run_id, `${claim.lost}; this is attempt ${claim.attempt}, run from the start`).catch(() => undefined);
          o.delivery?.started?.(req, run_id);
          changed();
        },
        onDelivered: (item) => {
          o.delivery?.delivered(req, item);
          changed();
        },
        onObserved: () => changed(),
      });
      o.log({ event: 'run.ended', run_id, status: outcome.status }, `run ${run_id} ${outcome.status}`);
    } catch (err) {
      o.warn(`run ${run_id} could not run: ${err instanceof Error ? err.message : String(err)}`);
      if (!started) await recordFailure(claim.run, err, false);
    } finally {
      controllers.delete(run_id);
      if (started) o.delivery?.ended(run_id);
    }
    await finishClaim(db, run_id, { worker_id, attempt: claim.attempt });
  };

  /** Heartbeat; cancels asked while a notification was missed; takes over the jobs of dead workers. */
  const tick = async () => {
    const alive = await db.run('heartbeat', (q) => q.exec('UPDATE queue_workers SET heartbeat_at = now() WHERE worker_id = $1', [worker_id]));
    if (alive === 0) {
      o.warn(`worker ${worker_id} lost its lease (no heartbeat for ${o.leaseSeconds}s; its runs were taken over): stopping`);
      for (const c of controllers.values()) c.abort(new LbotError('cancelled', 'the worker lost its lease'));
      why = 'lease_lost';
      void close();
      return;
    }
    const cancels = await db.run('reading cancels', (q) =>
      q.rows(`SELECT run_id FROM run_queue WHERE worker_id = $1 AND status = 'running' AND cancel_requested`, [worker_id]),
    );
    for (const r of cancels) cancelLocal(text(r, 'run_id'));
    // Dead workers' rows go; jobs locked longer than a lease by a pool no live worker owns are unlocked.
    const dead = await db.run('sweeping dead workers', (q) =>
      q.rows(`DELETE FROM queue_workers WHERE heartbeat_at < now() - make_interval(secs => lease_seconds) RETURNING worker_id`),
    );
    if (dead.length > 0)
      o.warn(`worker${dead.length > 1 ? 's' : ''} ${dead.map((d) => text(d, 'worker_id')).join(', ')} stopped heartbeating: their runs are taken over`);
    const orphans = await db.run('finding orphaned jobs', (q) =>
      q.rows(
        `SELECT DISTINCT j.locked_by FROM graphile_worker.jobs j
         WHERE j.locked_by IS NOT NULL AND j.locked_at < now() - make_interval(secs => $1)
           AND NOT EXISTS (SELECT 1 FROM queue_workers w WHERE w.pool_id = j.locked_by)`,
        [o.leaseSeconds],
      ),
    );
    if (orphans.length > 0 && utils) await utils.forceUnlockWorkers(orphans.map((r) => text(r, 'locked_by')));
    // One named queue per conversation: the queues of conversations with no job left are dropped now and then.
    if (utils && Date.now() - lastCleanup > QUEUE_GC_MS) {
      lastCleanup = Date.now();
      await utils.cleanup({ tasks: ['GC_JOB_QUEUES'] });
    }
  };

  const close = (): Promise<void> =>
    (closing ??= (async () => {
      clearInterval(timer);
      await runner?.stop().catch((err: unknown) => o.warn(`stopping the queue runner: ${String(err)}`));
      await listener?.close();
      await db.run('deregistering', (q) => q.exec('DELETE FROM queue_workers WHERE worker_id = $1', [worker_id])).catch(() => undefined);
      await utils?.release();
      await pool.end().catch(() => undefined);
      await db.close().catch(() => undefined);
      stop(why);
    })());

  try {
    await migrateQueue(pool, o.url, o.warn);
    await db.run('registering the worker', (q) =>
      q.exec('INSERT INTO queue_workers (worker_id, host, pid, lease_seconds) VALUES ($1, $2, $3, $4)', [
        worker_id,
        os.hostname(),
        process.pid,
        o.leaseSeconds,
      ]),
    );
    utils = await makeWorkerUtils({ pgPool: pool, logger });
    listener = listen(o.url, [RUN_CANCEL], (_c, run_id) => cancelLocal(run_id), o.warn);
    await tick();
    timer = setInterval(
      () => void tick().catch((err: unknown) => o.warn(`worker heartbeat failed: ${err instanceof Error ? err.message : String(err)}`)),
      (o.leaseSeconds * 1000) / 3,
    );
    // The pool's id is what its jobs are locked by: recorded so a sweeper knows whose they are.
    const events: WorkerEvents = new EventEmitter();
    let pool_id: string | null = null;
    events.on('pool:create', ({ workerPool }) => (pool_id = workerPool.id));
    runner = await runGraphile({
      pgPool: pool,
      taskList: { [RUN_TASK]: task },
      concurrency: o.concurrency,
      noHandleSignals: true,
      pollInterval: 1000,
      logger,
      events,
    });
    await db.run('registering the worker pool', (q) => q.exec('UPDATE queue_workers SET pool_id = $2 WHERE worker_id = $1', [worker_id, pool_id]));
  } catch (err) {
    await close();
    throw err;
  }
  return { worker_id, stopped, close };
}
