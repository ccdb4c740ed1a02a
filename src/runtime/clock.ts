// The system clock: wall time and abortable timers for core/.
import type { Clock } from '../core/host/ports.js';

export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, fire) {
    const timer = setTimeout(fire, Math.max(0, Math.ceil(ms)));
    timer.unref();
    return () => clearTimeout(timer);
  },
};
