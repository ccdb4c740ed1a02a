// The Promise-returning form of the store interfaces (architecture.md §10: nothing may assume one process
// owns the data), derived from the synchronous ones by type, and the adapter that presents a synchronous
// store (SQLite, the embedded default) in that form.
import type { ArtifactStore, EventLog, RunStore, StateStore, StorageStore, Stores, Transcript } from './types.js';

/** `T` with every method returning a Promise of what it returns; a synchronous throw becomes a rejection. */
export type Async<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : T[K];
};

export type AsyncEventLog = Async<EventLog>;
export type AsyncTranscript = Async<Transcript>;
export type AsyncRunStore = Async<RunStore>;
export type AsyncStateStore = Async<StateStore>;
export type AsyncStorageStore = Async<StorageStore>;
export type AsyncArtifactStore = Async<ArtifactStore>;

/** The stores every backend implements asynchronously (delivery and knowledge bases follow). */
export type AsyncStoreName = 'events' | 'transcript' | 'runs' | 'state' | 'storage' | 'artifacts';

export type AsyncStores = { [K in AsyncStoreName]: Async<Stores[K]> } & { close(): Promise<void> };

/**
 * Presents `store` as `Async<T>`: each method call runs synchronously and settles the returned
 * Promise with its result or its error. Method wrappers are made once per name.
 */
export function asAsync<T extends object>(store: T): Async<T> {
  const wrappers = new Map<PropertyKey, unknown>();
  const proxy = new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      let wrapped = wrappers.get(prop);
      if (wrapped === undefined) {
        wrapped = (...args: unknown[]) => {
          try {
            return Promise.resolve(Reflect.apply(value, target, args));
          } catch (err) {
            return Promise.reject(err instanceof Error ? err : new Error(String(err)));
          }
        };
        wrappers.set(prop, wrapped);
      }
      return wrapped;
    },
  });
  // The proxy answers every method of T with a function returning a Promise of its result: Async<T>.
  return proxy as unknown as Async<T>;
}

/** The synchronous stores of one data dir as AsyncStores; closing closes them. */
export function asAsyncStores(stores: Stores): AsyncStores {
  return {
    events: asAsync(stores.events),
    transcript: asAsync(stores.transcript),
    runs: asAsync(stores.runs),
    state: asAsync(stores.state),
    storage: asAsync(stores.storage),
    artifacts: asAsync(stores.artifacts),
    close: () => {
      stores.close();
      return Promise.resolve();
    },
  };
}
