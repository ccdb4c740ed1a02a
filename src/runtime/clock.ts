// The system clock: wall time and abortable timers for core/.
import type { Clock } from '../core/host/ports.js';

export const systemClock: Clock = {
  now: () => Date.now(),
  timeout: (ms) => AbortSignal.timeout(Math.max(0, Math.ceil(ms))),
};
