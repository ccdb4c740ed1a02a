// LISTEN/NOTIFY between serve instances and workers: `lbot_run` (a run's record changed: a result, its end)
// and `lbot_run_cancel` (cancel the run with this id, wherever it runs). Payloads are run ids only.
import pg from 'pg';
import type { PgQuery } from '../stores/postgres/connection.js';

export const RUN_CHANGED = 'lbot_run';
export const RUN_CANCEL = 'lbot_run_cancel';

export type Listener = { close(): Promise<void> };

const RECONNECT_MS = 1000;

/** Sends `run_id` on `channel` (inside a transaction it is delivered at commit). */
export async function notify(q: PgQuery, channel: typeof RUN_CHANGED | typeof RUN_CANCEL, run_id: string): Promise<void> {
  await q.exec('SELECT pg_notify($1, $2)', [channel, run_id]);
}

/**
 * One connection LISTENing on `channels`, reconnected after a drop. A notification can be missed while it is
 * down, so whoever waits on one also polls (see QueueDispatcher.changed and the worker's cancel check).
 */
export function listen(url: string, channels: readonly string[], on: (channel: string, payload: string) => void, warn: (m: string) => void): Listener {
  let client: pg.Client | null = null;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
    c.on('notification', (m) => {
      if (m.payload !== undefined) on(m.channel, m.payload);
    });
    c.on('error', () => retry(c));
    c.on('end', () => retry(c));
    client = c;
    try {
      await c.connect();
      for (const ch of channels) await c.query(`LISTEN ${pg.escapeIdentifier(ch)}`);
    } catch (err) {
      warn(`queue notifications: ${err instanceof Error ? err.message : String(err)}; retrying`);
      retry(c);
    }
  };
  const retry = (c: pg.Client) => {
    if (closed || client !== c) return;
    client = null;
    c.end().catch(() => undefined);
    timer = setTimeout(() => void connect(), RECONNECT_MS);
    timer.unref();
  };
  void connect();
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}
