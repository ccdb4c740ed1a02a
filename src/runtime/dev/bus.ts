// The dev session's event bus: controllers publish DevEvents, the dashboard and log printers subscribe.
import type { DevEvent } from '../../core/dev/events.js';

const KEEP = 500;

export class DevBus {
  readonly #listeners = new Set<(e: DevEvent) => void>();
  readonly #recent: DevEvent[] = [];

  emit(e: DevEvent): void {
    this.#recent.push(e);
    if (this.#recent.length > KEEP) this.#recent.shift();
    for (const l of [...this.#listeners]) l(e);
  }

  /** Subscribes; with `replay`, first receives the recent events (a dashboard that mounts late). */
  subscribe(listener: (e: DevEvent) => void, opts: { replay?: boolean } = {}): () => void {
    if (opts.replay) for (const e of this.#recent) listener(e);
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
