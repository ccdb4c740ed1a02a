// Which process owns a run: recorded on each run so runs of a crashed lbot can be marked interrupted.
import os from 'node:os';
import type { AsyncRunStore } from '../core/stores/async.js';
import { processAlive } from './process/identity.js';

export const OWNER = { pid: process.pid, host: os.hostname() };

/** Marks runs left `running` by a process of this machine that no longer exists as `interrupted`. */
export async function reapInterruptedRuns(runs: Pick<AsyncRunStore, 'running' | 'markInterrupted'>): Promise<number> {
  const running = await runs.running();
  const dead = running.filter((r) => r.owner !== null && r.owner.host === OWNER.host && r.owner.pid !== OWNER.pid && !processAlive(r.owner.pid));
  if (dead.length > 0) await runs.markInterrupted(dead.map((r) => r.run_id));
  return dead.length;
}
