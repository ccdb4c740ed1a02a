// The dashboard's external store: the controller feeds it events and picker moves, the view reads it.
import type { DevEvent } from '../core/dev/events.js';
import { initialDashboard, reduceDev, type DashboardState } from './dev-model.js';

/** Feed lines kept; older ones were printed already and are dropped from memory. */
const FEED_KEEP = 1000;

export class DashboardStore {
  #state: DashboardState = initialDashboard;
  #seq = 0;
  readonly #listeners = new Set<() => void>();

  readonly get = (): DashboardState => this.#state;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  apply(e: DevEvent): void {
    const next = reduceDev(this.#state, e, this.#seq++);
    this.#set(next.feed.length > FEED_KEEP ? { ...next, feed: next.feed.slice(-FEED_KEEP) } : next);
  }

  openPicker(files: readonly string[]): void {
    this.#set({ ...this.#state, picker: { files, index: 0 } });
  }

  movePicker(delta: number): void {
    const p = this.#state.picker;
    if (!p || p.files.length === 0) return;
    this.#set({ ...this.#state, picker: { ...p, index: (p.index + delta + p.files.length) % p.files.length } });
  }

  closePicker(): void {
    this.#set({ ...this.#state, picker: null });
  }

  #set(next: DashboardState): void {
    this.#state = next;
    for (const l of [...this.#listeners]) l();
  }
}
