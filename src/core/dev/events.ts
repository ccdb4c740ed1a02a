// What a dev session reports, as one discriminated union: reloads, runs, results, notices and API calls.
import type { Delivered } from '../host/result-processor.js';
import type { RunOutcome } from '../host/host.js';
import type { ObservedNotice } from '../stores/types.js';

export type DevEvent =
  | { type: 'dev.ready'; url: string; plugins: Array<{ identity: string; dir: string }> }
  | { type: 'dev.changed'; plugin_dir: string; paths: string[] }
  | { type: 'dev.reloading'; plugin: string }
  | { type: 'dev.reloaded'; plugin: string; generation: number; ms: number }
  | { type: 'dev.reload_failed'; plugin: string; dir: string; error: string }
  | { type: 'dev.plugin_removed'; plugin: string; dir: string }
  | { type: 'dev.event_file'; file: string }
  | { type: 'dev.warning'; message: string }
  | { type: 'run.started'; run_id: string; runner_id: string; event_id: string; event_type: string }
  | { type: 'run.delivered'; item: Delivered }
  | { type: 'run.observed'; run_id: string; notice: ObservedNotice }
  | { type: 'api.call'; run_id: string; action: string; ok: boolean; code: string | null; message: string | null }
  | { type: 'run.ended'; outcome: RunOutcome };

/** A plain log line for a dev event (off a TTY); null for events too chatty to print. */
export function describeDevEvent(e: DevEvent): string | null {
  switch (e.type) {
    case 'dev.ready':
      return `dev: serving ${e.plugins.map((p) => p.identity).join(', ') || 'no plugins'} on ${e.url}`;
    case 'dev.changed':
      return `dev: ${e.paths.length} change(s) in ${e.plugin_dir}`;
    case 'dev.reloading':
      return null;
    case 'dev.reloaded':
      return `dev: reloaded ${e.plugin} (generation ${e.generation}) in ${Math.round(e.ms)} ms`;
    case 'dev.reload_failed':
      return `dev: reload of ${e.plugin} failed; the last good version keeps serving: ${e.error}`;
    case 'dev.plugin_removed':
      return `dev: ${e.plugin} is gone from ${e.dir}; it is no longer served`;
    case 'dev.event_file':
      return `dev: event file ${e.file}`;
    case 'dev.warning':
      return `dev: warning: ${e.message}`;
    case 'run.started':
      return `run ${e.run_id} started: ${e.event_type} → ${e.runner_id}`;
    case 'run.delivered':
      return e.item.type === 'message.completed'
        ? `run ${e.item.run_id}: ${typeof e.item.message.content === 'string' ? e.item.message.content : JSON.stringify(e.item.message.content)}`
        : null;
    case 'run.observed':
      return `run ${e.run_id}: ${e.notice.type} ${JSON.stringify(e.notice.data)}`;
    case 'api.call':
      return e.ok ? null : `run ${e.run_id}: ${e.action} denied: ${e.code ?? ''} ${e.message ?? ''}`.trimEnd();
    case 'run.ended':
      return `run ${e.outcome.run_id} ${e.outcome.status}${e.outcome.error ? `: ${e.outcome.error.code}: ${e.outcome.error.message}` : ''}`;
    default: {
      const never: never = e;
      return never;
    }
  }
}
