// Batches the audit of proxy calls: a run that makes thousands of calls would otherwise pay one database
// commit per call. Entries are written within `flushMs`, when `maxBatch` accumulate, and when a run ends.
import type { ApiCallAudit, RunStore } from '../stores/types.js';
import type { Clock } from './ports.js';

export class AuditBuffer {
  #pending: Array<{ run_id: string; call: ApiCallAudit }> = [];
  #scheduled = false;

  constructor(
    private readonly store: RunStore,
    private readonly clock: Clock,
    private readonly onError: (err: unknown) => void,
    private readonly flushMs = 50,
    private readonly maxBatch = 256,
  ) {}

  add(run_id: string, call: ApiCallAudit): void {
    this.#pending.push({ run_id, call });
    if (this.#pending.length >= this.maxBatch) return this.flush();
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.clock.timeout(this.flushMs).addEventListener('abort', () => this.flush(), { once: true });
  }

  /** Writes everything pending now (called at the end of every run and on close). */
  flush(): void {
    this.#scheduled = false;
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    try {
      this.store.addApiCalls(batch);
    } catch (err) {
      this.onError(err);
    }
  }
}
