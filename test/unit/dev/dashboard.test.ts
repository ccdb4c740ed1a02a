// The dev dashboard: the reducer folds dev events into view state, and the view renders at fixed widths.
import { createElement } from 'react';
import { renderToString } from 'ink';
import { describe, expect, it } from 'vitest';
import type { DevEvent } from '../../../src/core/dev/events.js';
import { initialDashboard, reduceDev, type DashboardState } from '../../../src/ui/dev-model.js';
import { DevDashboard } from '../../../src/ui/dev-dashboard.js';
import { DashboardStore } from '../../../src/ui/dev-store.js';

const RUN = '7c1d2e3f-0000-4000-8000-000000000001';
const outcome = {
  run_id: RUN,
  runner_id: 'plugin:acme/hot/default',
  binding_id: 'cli',
  event_id: 'ev-1',
  status: 'completed' as const,
  error: null,
  reply: 'v2',
};

const EVENTS: DevEvent[] = [
  { type: 'dev.ready', url: 'http://127.0.0.1:8787', plugins: [{ identity: 'acme/hot', dir: '/p/hot' }] },
  { type: 'dev.reloaded', plugin: 'acme/hot', generation: 2, ms: 84.2 },
  { type: 'dev.event_file', file: '/events/msg.json' },
  { type: 'run.started', run_id: RUN, runner_id: 'plugin:acme/hot/default', event_id: 'ev-1', event_type: 'message.received' },
  { type: 'run.delivered', item: { type: 'message.delta', run_id: RUN, chunk: { role: 'assistant', content: 'v', is_final: false, msg_sequence: 0 } } },
];

const fold = (events: DevEvent[], from: DashboardState = initialDashboard) => events.reduce((s, e, i) => reduceDev(s, e, i), from);

describe('dev dashboard model', () => {
  it('tracks plugins, the event file, runs in flight and finished lines', () => {
    const s = fold(EVENTS);
    expect(s.url).toBe('http://127.0.0.1:8787');
    expect(s.plugins).toEqual([{ identity: 'acme/hot', dir: '/p/hot', status: 'serving', generation: 2, error: null, reloadMs: 84.2 }]);
    expect(s.eventFile).toBe('/events/msg.json');
    expect(s.live).toEqual([{ run_id: RUN, runner_id: 'plugin:acme/hot/default', event_type: 'message.received', text: 'v' }]);
    const done = fold(
      [
        { type: 'run.observed', run_id: RUN, notice: { at: 1, type: 'tool.call.started', data: { tool_name: 'search' } } },
        { type: 'run.observed', run_id: RUN, notice: { at: 1, type: 'state.updated', data: { scope: 'conversation', key: 'topic' } } },
        { type: 'api.call', run_id: RUN, action: 'history.page', ok: false, code: 'unauthorized', message: 'history.page access not authorized' },
        { type: 'run.delivered', item: { type: 'message.completed', run_id: RUN, message: { role: 'assistant', content: 'v2' } } },
        { type: 'run.ended', outcome },
      ],
      s,
    );
    expect(done.live).toEqual([]);
    expect(done.feed.map((l) => l.kind)).toEqual(['reload', 'run', 'tool', 'state', 'denied', 'reply', 'run']);
    expect(done.feed.find((l) => l.kind === 'denied')?.text).toBe('7c1d2e3f history.page denied: unauthorized history.page access not authorized');
  });

  it('marks a failed reload on the plugin and keeps its generation', () => {
    const s = fold([
      ...EVENTS.slice(0, 2),
      { type: 'dev.reload_failed', plugin: 'acme/hot', dir: '/p/hot', error: 'manifest.yaml is not valid YAML: bad\nmore' },
    ]);
    expect(s.plugins[0]).toMatchObject({ status: 'error', generation: 2, error: 'manifest.yaml is not valid YAML: bad\nmore' });
    expect(s.feed.at(-1)?.text).toBe('reload of acme/hot failed, last good version still serving: manifest.yaml is not valid YAML: bad\nmore');
  });
});

describe('dev dashboard view', () => {
  it('renders plugins, the live run, finished lines and the keys at 80 columns', () => {
    const out = renderToString(createElement(DevDashboard, { state: fold(EVENTS) }), { columns: 80 });
    expect(out).toContain('dev   reloaded acme/hot (generation 2, 84 ms)');
    expect(out).toContain('lbot dev http://127.0.0.1:8787');
    expect(out).toContain('● acme/hot gen 2 · 84 ms');
    expect(out).toContain('▶ 7c1d2e3f message.received v');
    expect(out).toContain('event: msg.json · r re-run · e pick event · q quit');
    for (const line of out.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('wraps a reload error at 40 columns instead of cutting it: file, line, column and the whole message stay readable', () => {
    const error = "tsc failed in /p/hot:\nsrc/main.ts:3:7: error TS2322: Type 'number' is not assignable to type 'string'. The end of the message is here.";
    const s = fold([...EVENTS, { type: 'dev.reload_failed', plugin: 'acme/hot', dir: '/p/hot', error }]);
    const out = renderToString(createElement(DevDashboard, { state: s }), { columns: 40 });
    for (const line of out.split('\n')) expect(line.length).toBeLessThanOrEqual(40);
    expect(out).toContain('✗ acme/hot');
    expect(out).toContain('src/main.ts:3:7:');
    // Every word of the message appears (wrapped across lines, in the feed line and under the plugin row).
    const words = out.replace(/[│╭╮╰╯─]/g, ' ').split(/\s+/);
    for (const word of ['TS2322:', 'assignable', 'message', 'here.']) expect(words.filter((w) => w === word).length).toBeGreaterThanOrEqual(2);
  });

  it('shows the event picker with the selected file', () => {
    const store = new DashboardStore();
    for (const e of EVENTS) store.apply(e);
    store.openPicker(['/events/join.json', '/events/msg.json']);
    store.movePicker(1);
    const out = renderToString(createElement(DevDashboard, { state: store.get() }), { columns: 80 });
    expect(out).toContain('pick an event file');
    expect(out).toContain('join.json');
    expect(store.get().picker?.index).toBe(1);
    store.movePicker(1);
    expect(store.get().picker?.index).toBe(0);
    store.closePicker();
    expect(store.get().picker).toBeNull();
  });
});
