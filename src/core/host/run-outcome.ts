// How one run ended, as the host answers it to callers and observers.
import type { RunError, RunStatus } from '../stores/types.js';

export type RunOutcome = {
  run_id: string;
  runner_id: string;
  binding_id: string;
  event_id: string;
  status: Exclude<RunStatus, 'running'>;
  error: RunError | null;
  reply: string | null;
};
