// The dev dashboard's state and the reducer that folds dev events into it (no I/O, no timers).
import type { DevEvent } from '../core/dev/events.js';
import { isRecord } from '../core/json.js';

export type PluginRow = {
  identity: string;
  dir: string;
  status: 'serving' | 'reloading' | 'error';
  generation: number;
  error: string | null;
  reloadMs: number | null;
};
export type FeedKind = 'reply' | 'tool' | 'state' | 'denied' | 'run' | 'reload' | 'warning';
export type FeedLine = { key: string; kind: FeedKind; text: string };
export type LiveRun = { run_id: string; runner_id: string; event_type: string; text: string };
export type Picker = { files: readonly string[]; index: number };

export type DashboardState = {
  url: string | null;
  plugins: readonly PluginRow[];
  eventFile: string | null;
  /** Finished lines, printed once (ink <Static>). */
  feed: readonly FeedLine[];
  /** Runs in flight, redrawn live. */
  live: readonly LiveRun[];
  picker: Picker | null;
};

export const initialDashboard: DashboardState = { url: null, plugins: [], eventFile: null, feed: [], live: [], picker: null };

const short = (id: string) => id.slice(0, 8);

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (isRecord(c) && typeof c.text === 'string' ? c.text : '')).join('');
  return JSON.stringify(content ?? '');
}

function upsertPlugin(plugins: readonly PluginRow[], identity: string, dir: string | null, patch: Partial<PluginRow>): PluginRow[] {
  const found = plugins.find((p) => p.identity === identity || (dir !== null && p.dir === dir));
  if (!found) return [...plugins, { identity, dir: dir ?? '', status: 'serving', generation: 0, error: null, reloadMs: null, ...patch }];
  return plugins.map((p) => (p === found ? { ...p, ...patch } : p));
}

/** Folds one event into the state; `seq` keys the feed lines. */
export function reduceDev(state: DashboardState, e: DevEvent, seq: number): DashboardState {
  const line = (kind: FeedKind, text: string): DashboardState => ({ ...state, feed: [...state.feed, { key: `${seq}`, kind, text }] });
  switch (e.type) {
    case 'dev.ready':
      return { ...state, url: e.url, plugins: e.plugins.reduce<PluginRow[]>((acc, p) => upsertPlugin(acc, p.identity, p.dir, {}), [...state.plugins]) };
    case 'dev.changed':
      return state;
    case 'dev.reloading':
      return { ...state, plugins: upsertPlugin(state.plugins, e.plugin, null, { status: 'reloading' }) };
    case 'dev.reloaded':
      return {
        ...line('reload', `reloaded ${e.plugin} (generation ${e.generation}, ${Math.round(e.ms)} ms)`),
        plugins: upsertPlugin(state.plugins, e.plugin, null, { status: 'serving', generation: e.generation, error: null, reloadMs: e.ms }),
      };
    case 'dev.reload_failed':
      return {
        ...line('warning', `reload of ${e.plugin} failed, last good version still serving: ${e.error}`),
        plugins: upsertPlugin(state.plugins, e.plugin, e.dir, { status: 'error', error: e.error }),
      };
    case 'dev.plugin_removed':
      return { ...line('reload', `${e.plugin} removed`), plugins: state.plugins.filter((p) => p.identity !== e.plugin) };
    case 'dev.event_file':
      return { ...state, eventFile: e.file };
    case 'dev.warning':
      return line('warning', e.message);
    case 'run.started':
      return {
        ...line('run', `▶ ${short(e.run_id)} ${e.event_type} → ${e.runner_id}`),
        live: [...state.live, { run_id: e.run_id, runner_id: e.runner_id, event_type: e.event_type, text: '' }],
      };
    case 'run.delivered': {
      const { item } = e;
      if (item.type === 'message.delta')
        return { ...state, live: state.live.map((r) => (r.run_id === item.run_id ? { ...r, text: contentText(item.chunk.content) } : r)) };
      return {
        ...line('reply', `${short(item.run_id)} ${contentText(item.message.content)}`),
        live: state.live.map((r) => (r.run_id === item.run_id ? { ...r, text: '' } : r)),
      };
    }
    case 'run.observed': {
      const d = e.notice.data;
      if (e.notice.type.startsWith('tool.call.'))
        return line('tool', `${short(e.run_id)} ${e.notice.type} ${typeof d.tool_name === 'string' ? d.tool_name : ''}`.trimEnd());
      if (e.notice.type === 'state.updated')
        return line('state', `${short(e.run_id)} state ${typeof d.scope === 'string' ? d.scope : '?'}:${typeof d.key === 'string' ? d.key : '?'}`);
      return line('run', `${short(e.run_id)} ${e.notice.type}`);
    }
    case 'api.call':
      if (!e.ok) return line('denied', `${short(e.run_id)} ${e.action} denied: ${e.code ?? ''} ${e.message ?? ''}`.trimEnd());
      if (e.action === 'tools.call') return line('tool', `${short(e.run_id)} tools.call`);
      if (e.action === 'state.set' || e.action === 'state.delete' || e.action === 'storage.set' || e.action === 'storage.delete')
        return line('state', `${short(e.run_id)} ${e.action}`);
      return state;
    case 'run.ended': {
      const o = e.outcome;
      return {
        ...line('run', `■ ${short(o.run_id)} ${o.status}${o.error ? ` ${o.error.code}: ${o.error.message.split('\n')[0] ?? ''}` : ''}`),
        live: state.live.filter((r) => r.run_id !== o.run_id),
      };
    }
    default: {
      const never: never = e;
      return never;
    }
  }
}
