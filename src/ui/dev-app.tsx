// Mounts the dev dashboard: reads the store through a hook and hands key presses to the controller.
import { useSyncExternalStore } from 'react';
import { render, useInput } from 'ink';
import { DevDashboard } from './dev-dashboard.js';
import type { DashboardStore } from './dev-store.js';

export type DevKey = 'rerun' | 'pick' | 'quit' | 'up' | 'down' | 'choose' | 'escape';

function DevApp({ store, onKey }: { readonly store: DashboardStore; readonly onKey: (key: DevKey) => void }) {
  const state = useSyncExternalStore(store.subscribe, store.get);
  useInput((input, key) => {
    if (input === 'q' || (key.ctrl && input === 'c')) return onKey('quit');
    if (state.picker) {
      if (key.upArrow) onKey('up');
      else if (key.downArrow) onKey('down');
      else if (key.return) onKey('choose');
      else if (key.escape) onKey('escape');
      return;
    }
    if (input === 'r') onKey('rerun');
    else if (input === 'e') onKey('pick');
  });
  return <DevDashboard state={state} />;
}

/** Renders the dashboard on the terminal; returns how to take it down. */
export function mountDevDashboard(store: DashboardStore, onKey: (key: DevKey) => void): { unmount(): void; waitUntilExit(): Promise<unknown> } {
  const instance = render(<DevApp store={store} onKey={onKey} />, { exitOnCtrlC: false });
  return { unmount: () => instance.unmount(), waitUntilExit: () => instance.waitUntilExit() };
}
