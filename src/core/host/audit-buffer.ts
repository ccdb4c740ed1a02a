// Group commit of the audit of proxy calls. An allowed call is answered before its row commits: its
// entry waits up to a few milliseconds (`windowMs`) or until `maxBatch` rows are pending, so the commit
// leaves the answer's path and the calls a runner makes one after another share it. A refusal, and the end
// of a run, write everything pending first, so a refusal's answer (and a run's end) implies its own row and
// every earlier one are durable; a crash can lose only the rows of allowed calls answered in the last window.
import type { AsyncRunStore } from '../stores/async.js';
import type { ApiCallAudit } from '../stores/types.js';

/** How long an allowed call's row may wait for others to share its commit. */
export const AUDIT_WINDOW_MS = 5;

type Pending = { run_id: string; call: ApiCallAudit; resolve: () => void; reject: (err: unknown) => void };

export class AuditBuffer {
  #pending: Pending[] = [];
  #timer: ReturnType<typeof setTimeout> | null = null;
  #writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: AsyncRunStore,
    /** Told of a failed write with the runs whose entries were lost; add() also rejects. */
    private readonly onError: (err: unknown, run_ids: readonly string[]) => void,
    private readonly maxBatch = 256,
    private readonly windowMs = AUDIT_WINDOW_MS,
  ) {}

  /**
   * Resolves when the entry is committed; rejects with the store error when the write failed. `now`
   * commits it (with everything pending before it) before returning, as a refusal needs.
   */
  add(run_id: string, call: ApiCallAudit, now = false): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ run_id, call, resolve, reject });
      if (now || this.#pending.length >= this.maxBatch) return void this.flush();
      this.#timer ??= setTimeout(() => void this.flush(), this.windowMs);
    });
  }

  /**
   * Writes everything pending now (also called at the end of every run and on close); settles once
   * those entries and every batch written before them are committed. Never rejects.
   */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const batch = this.#pending;
    if (batch.length === 0) return this.#writing;
    this.#pending = [];
    // Batches commit one after another, so a refusal's row is never durable before an earlier one.
    this.#writing = this.#writing.then(async () => {
      try {
        await this.store.addApiCalls(batch.map(({ run_id, call }) => ({ run_id, call })));
      } catch (err) {
        this.onError(err, [...new Set(batch.map((b) => b.run_id))]);
        for (const b of batch) b.reject(err);
        return;
      }
      for (const b of batch) b.resolve();
    });
    return this.#writing;
  }
}
