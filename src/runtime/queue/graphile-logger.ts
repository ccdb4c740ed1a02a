// graphile-worker's log routed to lbot's warnings: errors and warnings only (its info lines are per job).
import { Logger } from 'graphile-worker';

export function quietGraphileLogger(warn: (m: string) => void): Logger {
  return new Logger(() => (level, message) => {
    const l = String(level);
    if (l === 'error' || l === 'warning') warn(`queue: ${message}`);
  });
}
