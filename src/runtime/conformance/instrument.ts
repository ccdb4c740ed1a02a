// Watches plugin connections for the conformance suite: raw results per run, the plugin's answer, the
// cancel round trip, kills, connection failures, and how each process ended.
import { performance } from 'node:perf_hooks';
import type { PluginConnection, PluginLauncher } from '../../core/host/ports.js';
import type { RawResult } from '../../core/conformance/evidence.js';
import { isRecord } from '../../core/json.js';
import { LbotError } from '../../core/errors.js';
import { StdioPluginConnection } from '../plugins/connection.js';
import { LangbotPluginConnection } from '../plugins/langbot-connection.js';

/** The connection classes whose failure and exit the suite can observe: lbot's protocol and LangBot's wire. */
export type WatchedConnection = StdioPluginConnection | LangbotPluginConnection;

function watched(conn: PluginConnection): WatchedConnection | null {
  return conn instanceof StdioPluginConnection || conn instanceof LangbotPluginConnection ? conn : null;
}

export type RunTrace = {
  results: RawResult[];
  reply: string | null;
  repliedAt: number | null;
  cancelAt: number | null;
  killed: boolean;
  channel: { code: string; message: string } | null;
};

export class ConnectionWatch {
  readonly #traces = new Map<string, RunTrace>();
  readonly #listeners = new Map<string, (r: RawResult) => void>();
  /** Every connection started, for the shutdown check. */
  readonly connections: WatchedConnection[] = [];

  trace(run_id: string): RunTrace {
    let t = this.#traces.get(run_id);
    if (!t) {
      t = { results: [], reply: null, repliedAt: null, cancelAt: null, killed: false, channel: null };
      this.#traces.set(run_id, t);
    }
    return t;
  }

  /** Calls `listener` with each result of `run_id` as it arrives. */
  onResult(run_id: string, listener: (r: RawResult) => void): void {
    this.#listeners.set(run_id, listener);
  }

  /** A launcher whose connections report to this watch. */
  wrap(launcher: PluginLauncher): PluginLauncher {
    return {
      start: async (spec, onApiCall, opts) => this.#wrapConnection(await launcher.start(spec, onApiCall, opts)),
    };
  }

  #wrapConnection(conn: PluginConnection): PluginConnection {
    const seen = watched(conn);
    if (seen) this.connections.push(seen);
    const traceKills = () => {
      for (const id of conn.activeRuns()) this.trace(id).killed = true;
    };
    return {
      identity: conn.identity,
      pgid: conn.pgid,
      exited: conn.exited,
      run: (params, onResult) => {
        const trace = this.trace(params.run_id);
        const reply = conn.run(params, (raw) => {
          const item: RawResult = { type: isRecord(raw) && typeof raw.type === 'string' ? raw.type : null, raw };
          trace.results.push(item);
          this.#listeners.get(params.run_id)?.(item);
          onResult(raw);
        });
        reply.then(
          (r) => {
            trace.reply = r.status;
            trace.repliedAt = performance.now();
          },
          (err: unknown) => {
            const failure = seen ? seen.failure : null;
            if (failure && err instanceof LbotError && err.code === failure.code) trace.channel = { code: failure.code, message: failure.message };
          },
        );
        return reply;
      },
      cancel: (run_id) => {
        this.trace(run_id).cancelAt ??= performance.now();
        conn.cancel(run_id);
      },
      activeRuns: () => conn.activeRuns(),
      stderrTail: () => conn.stderrTail(),
      get accepting() {
        return conn.accepting;
      },
      close: () => conn.close(),
      kill: () => {
        traceKills();
        return conn.kill();
      },
    };
  }
}
