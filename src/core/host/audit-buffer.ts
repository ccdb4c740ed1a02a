// Group commit of the audit of proxy calls: entries added in the same turn of the event loop share one
// database commit, and each add() resolves only once its entry is committed, so a call is answered only
// after its audit row is durable (a crash can lose only calls not yet answered).
import type { ApiCallAudit, RunStore } from '../stores/types.js';

type Pending = { run_id: string; call: ApiCallAudit; resolve: () => void; reject: (err: unknown) => void };

export class AuditBuffer {
  #pending: Pending[] = [];
  #scheduled = false;

  constructor(
    private readonly store: RunStore,
    /** Told of a failed write with the runs whose entries were lost; add() also rejects. */
    private readonly onError: (err: unknown, run_ids: readonly string[]) => void,
    private readonly maxBatch = 256,
  ) {}

  /** Resolves when the entry is committed; rejects with the store error when the write failed. */
  add(run_id: string, call: ApiCallAudit): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ run_id, call, resolve, reject });
      if (this.#pending.length >= this.maxBatch) return this.flush();
      if (this.#scheduled) return;
      this.#scheduled = true;
      queueMicrotask(() => this.flush());
    });
  }

  /** Writes everything pending now (also called at the end of every run and on close). */
  flush(): void {
    this.#scheduled = false;
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    try {
      this.store.addApiCalls(batch.map(({ run_id, call }) => ({ run_id, call })));
    } catch (err) {
      this.onError(err, [...new Set(batch.map((b) => b.run_id))]);
      for (const b of batch) b.reject(err);
      return;
    }
    for (const b of batch) b.resolve();
  }
}
