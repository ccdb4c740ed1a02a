// How `lbot dev` / `serve --dev` show a dev session: the ink dashboard on a TTY, else one line per event
// (plain text on stderr, or ServeLine NDJSON on stdout with --json).
import { describeDevEvent, type DevEvent } from '../../core/dev/events.js';
import type { DevSession } from '../../runtime/dev/session.js';
import type { Output } from './output.js';
import { deliveredLine, observedLine, summaryLine, type ResultLine } from '../../core/protocol/result-line.js';
import * as shapes from '../../core/shapes/index.js';

/** A dev event as a `--json` line: the results of runs as the StreamItem lines every result stream uses. */
function devLine(e: DevEvent): Exclude<DevEvent, { type: 'run.delivered' | 'run.observed' | 'run.ended' }> | ResultLine {
  switch (e.type) {
    case 'run.delivered':
      return deliveredLine(e.item);
    case 'run.observed':
      return observedLine(e.run_id, e.notice);
    case 'run.ended':
      return summaryLine(e.outcome);
    default:
      return e;
  }
}

/** Prints every dev event as it happens (recent ones first); returns the unsubscribe. */
export function printDevEvents(session: Pick<DevSession, 'bus'>, out: Output): () => void {
  return session.bus.subscribe(
    (e: DevEvent) => {
      if (out.json) return out.stream(shapes.ServeLine, devLine(e));
      const text = describeDevEvent(e);
      if (text !== null) out.notice(text);
    },
    { replay: true },
  );
}

/** Mounts the dashboard; `quit` is called on q. Returns the teardown. */
export async function showDashboard(session: DevSession, quit: () => void): Promise<() => void> {
  const { DashboardStore } = await import('../../ui/dev-store.js');
  const { mountDevDashboard } = await import('../../ui/dev-app.js');
  const store = new DashboardStore();
  const unsubscribe = session.bus.subscribe((e) => store.apply(e), { replay: true });
  const report = (err: unknown) => session.bus.emit({ type: 'dev.warning', message: err instanceof Error ? err.message : String(err) });
  const ui = mountDevDashboard(store, (key) => {
    const picker = store.get().picker;
    switch (key) {
      case 'rerun':
        session.runEvent().catch(report);
        return;
      case 'pick':
        session.eventFiles().then((files) => store.openPicker(files), report);
        return;
      case 'up':
        return store.movePicker(-1);
      case 'down':
        return store.movePicker(1);
      case 'choose': {
        const file = picker?.files[picker.index];
        store.closePicker();
        if (file) session.runEvent(file).catch(report);
        return;
      }
      case 'escape':
        return store.closePicker();
      case 'quit':
        return quit();
    }
  });
  return () => {
    unsubscribe();
    ui.unmount();
  };
}

/** Resolves when `signal` (the command's interrupt) aborts or `stop()` is called (q on the dashboard). */
export function untilStopped(signal: AbortSignal): { stopped: Promise<void>; stop(): void } {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => {
    stop = () => {
      signal.removeEventListener('abort', stop);
      resolve();
    };
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  return { stopped, stop };
}
