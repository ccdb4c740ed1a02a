// `serve --queue`: accepted runs go to the durable run queue instead of this process. One transaction
// records the request (run_queue) and adds its graphile-worker job; `lbot worker` processes run it.
// The run policy per conversation is decided here, under an advisory lock on the conversation's queue.
import { LbotError } from '../../core/errors.js';
import type { RunOutcome } from '../../core/host/host.js';
import type { AsyncRunStore } from '../../core/stores/async.js';
import { num, text, textOrNull, type Row } from '../../core/stores/sqlite/columns.js';
import type { RunRecord } from '../../core/stores/types.js';
import { PgStoreDb, type PgQuery } from '../stores/postgres/connection.js';
import { conversationBusy, conversationFull } from '../server/conversation-lanes.js';
import type { RunGateway, StartRequest } from '../server/run-gateway.js';
import type { QueuedRunView } from '../server/run-manager.js';
import { laneAndQueue } from './lane-name.js';
import { listen, notify, RUN_CANCEL, RUN_CHANGED, type Listener } from './notifications.js';
import { ADD_JOB_SQL, graphilePool, migrateQueue, RUN_TASK } from './schema.js';
import { encodeRequest } from './request.js';
import { timeOrderedId } from '../../core/time-ordered-id.js';

export type QueueDispatcherOptions = {
  /** The postgres:// URL of the shared stores. */
  url: string;
  runs: Pick<AsyncRunStore, 'get'>;
  /** serve.max_queued_per_conversation, read on each admission (config edits apply). */
  maxQueued(): number;
  warn(message: string): void;
};

const ACTIVE = `status IN ('queued', 'running')`;

/** The never-started outcome of a run cancelled (or superseded) before a worker took it. */
function unstarted(row: Row, message: string): RunOutcome {
  return {
    run_id: text(row, 'run_id'),
    runner_id: text(row, 'runner_id'),
    binding_id: text(row, 'binding_id'),
    event_id: text(row, 'event_id'),
    status: 'cancelled',
    error: { code: 'cancelled', message, retryable: false, details: { never_started: true } },
    reply: null,
  };
}

/** The outcome of a recorded run that ended; its reply is its last completed message. */
function outcomeOf(run: RunRecord): RunOutcome {
  const last = run.results.findLast((r) => r.type === 'message.completed');
  const content = last?.type === 'message.completed' ? last.data.message.content : null;
  return {
    run_id: run.run_id,
    runner_id: run.runner_id,
    binding_id: run.binding_id,
    event_id: run.event_id,
    status: run.status === 'running' ? 'failed' : run.status,
    error: run.error,
    reply: typeof content === 'string' ? content : null,
  };
}

export class QueueDispatcher implements RunGateway {
  readonly #waiters = new Map<string, Set<() => void>>();
  #closed = false;

  private constructor(
    private readonly o: QueueDispatcherOptions & { db: PgStoreDb },
    private readonly listener: Listener,
  ) {}

  /** Migrates graphile-worker's schema and listens for run changes. */
  static async open(opts: QueueDispatcherOptions): Promise<QueueDispatcher> {
    const pool = graphilePool(opts.url, 2);
    try {
      await migrateQueue(pool, opts.url, opts.warn);
    } finally {
      await pool.end();
    }
    let self: QueueDispatcher | undefined;
    const listener = listen(opts.url, [RUN_CHANGED], (_channel, run_id) => self?.wake(run_id), opts.warn);
    self = new QueueDispatcher({ ...opts, db: new PgStoreDb(opts.url, { max: 8 }) }, listener);
    return self;
  }

  wake(run_id: string): void {
    const set = this.#waiters.get(run_id);
    if (!set) return;
    this.#waiters.delete(run_id);
    for (const fn of set) fn();
  }

  async start(req: StartRequest): Promise<string> {
    if (this.#closed) throw new LbotError('cancelled', 'the server is shutting down');
    const { binding, event } = req;
    const { lane, queue } = laneAndQueue(binding, event);
    const run_id = timeOrderedId();
    return this.o.db.write('accepting a run into the queue', async (q) => {
      const accepted = async () => {
        const row = await q.row('SELECT run_id FROM run_queue WHERE event_id = $1 AND binding_id = $2', [event.event_id, binding.binding_id]);
        return row ? text(row, 'run_id') : null;
      };
      if (queue) await q.exec('SELECT pg_advisory_xact_lock(hashtext($1))', [queue]);
      // The same (event, binding) accepted twice is one run: a platform's redelivery gets the first run's id.
      const existing = await accepted();
      if (existing) return existing;
      if (lane && queue) {
        const active = await q.rows(`SELECT run_id, status FROM run_queue WHERE queue_name = $1 AND ${ACTIVE} ORDER BY seq`, [queue]);
        const holder = active[0];
        if (holder && binding.run_policy === 'reject') throw conversationBusy(lane, text(holder, 'run_id'));
        if (holder && binding.run_policy === 'interrupt') await this.#interrupt(q, queue, run_id);
        else if (holder) {
          const waiting = active.filter((r) => text(r, 'status') === 'queued').length;
          const limit = this.o.maxQueued();
          if (waiting >= limit) throw conversationFull(lane, waiting, limit, text(holder, 'run_id'));
        }
      }
      const inserted = await q.row(
        `INSERT INTO run_queue (run_id, event_id, binding_id, runner_id, conversation_id, queue_name, request_json, status, accepted_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $8) ON CONFLICT (event_id, binding_id) DO NOTHING RETURNING run_id`,
        [run_id, event.event_id, binding.binding_id, binding.runner_id, event.conversation_id, queue, encodeRequest(req), this.o.db.now()],
      );
      // Another instance accepted the same (event, binding) a moment ago (a parallel run takes no lane lock).
      if (!inserted) return (await accepted()) ?? run_id;
      await q.exec(ADD_JOB_SQL, [RUN_TASK, run_id, queue]);
      return run_id;
    });
  }

  /** run_policy interrupt: the waiting runs never start, the running one is cancelled where it runs. */
  async #interrupt(q: PgQuery, queue: string, by: string): Promise<void> {
    const superseded = await q.rows(
      `UPDATE run_queue SET status = 'cancelled', ended_at = $2, last_error = $3 WHERE queue_name = $1 AND status = 'queued' RETURNING run_id`,
      [queue, this.o.db.now(), `superseded by run ${by} (run_policy interrupt)`],
    );
    for (const r of superseded) await notify(q, RUN_CHANGED, text(r, 'run_id'));
    const running = await q.rows(`UPDATE run_queue SET cancel_requested = true WHERE queue_name = $1 AND status = 'running' RETURNING run_id`, [queue]);
    for (const r of running) await notify(q, RUN_CANCEL, text(r, 'run_id'));
  }

  get(): undefined {
    return undefined;
  }

  async queued(run_id: string): Promise<QueuedRunView | undefined> {
    const row = await this.o.db.run('reading a queued run', (q) => q.row(`SELECT * FROM run_queue WHERE run_id = $1 AND ${ACTIVE}`, [run_id]));
    if (!row) return undefined;
    const queue = textOrNull(row, 'queue_name');
    let position: QueuedRunView['queue'] = null;
    if (queue && text(row, 'status') === 'queued') {
      const ahead = await this.o.db.run('reading a queue', (q) =>
        q.rows(`SELECT run_id FROM run_queue WHERE queue_name = $1 AND seq < $2 AND ${ACTIVE} ORDER BY seq DESC`, [queue, num(row, 'seq')]),
      );
      const first = ahead[0];
      if (first) position = { ahead: text(first, 'run_id'), position: ahead.length };
    }
    return {
      run_id,
      status: 'queued',
      runner_id: text(row, 'runner_id'),
      binding_id: text(row, 'binding_id'),
      event_id: text(row, 'event_id'),
      conversation_id: textOrNull(row, 'conversation_id'),
      queued_at: num(row, 'accepted_at'),
      queue: position,
    };
  }

  /** Resolves once the run has ended: its record's outcome, or never-started when it was cancelled waiting. */
  outcome(run_id: string): Promise<RunOutcome> {
    return (async () => {
      for (;;) {
        if (this.#closed) throw new LbotError('cancelled', 'the server is shutting down');
        const run = await this.o.runs.get(run_id);
        if (run && run.status !== 'running') return outcomeOf(run);
        if (!run) {
          const row = await this.o.db.run('reading a queued run', (q) => q.row('SELECT * FROM run_queue WHERE run_id = $1', [run_id]));
          if (!row) throw new LbotError('not_found', `run ${run_id} not found`);
          if (text(row, 'status') === 'cancelled') return unstarted(row, textOrNull(row, 'last_error') ?? 'the run was cancelled before it started');
        }
        await this.changed(run_id, 1000);
      }
    })();
  }

  async cancel(run_id: string): Promise<boolean> {
    return this.o.db.write('cancelling a queued run', async (q) => {
      const row = await q.row(`SELECT status FROM run_queue WHERE run_id = $1 AND ${ACTIVE} FOR UPDATE`, [run_id]);
      if (!row) return false;
      if (text(row, 'status') === 'queued') {
        await q.exec(`UPDATE run_queue SET status = 'cancelled', ended_at = $2, last_error = $3 WHERE run_id = $1`, [
          run_id,
          this.o.db.now(),
          'the run was cancelled before it started',
        ]);
        await notify(q, RUN_CHANGED, run_id);
      } else {
        await q.exec('UPDATE run_queue SET cancel_requested = true WHERE run_id = $1', [run_id]);
        await notify(q, RUN_CANCEL, run_id);
      }
      return true;
    });
  }

  changed(run_id: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.#waiters.get(run_id) ?? new Set();
      this.#waiters.set(run_id, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0 && this.#waiters.get(run_id) === set) this.#waiters.delete(run_id);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      set.add(done);
    });
  }

  /** Stops accepting; runs already accepted stay queued for the workers (nothing accepted is lost). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const id of [...this.#waiters.keys()]) this.wake(id);
    await this.listener.close();
    await this.o.db.close();
  }
}
