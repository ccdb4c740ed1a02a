// The Promise-returning form of the store interfaces (architecture.md §10: nothing may assume one process
// owns the data), derived from the synchronous ones by type, and the adapter that presents a synchronous
// stores (SQLite, the embedded default) in that form.
import type { ArtifactStore, EventLog, RunStore, StateStore, StorageStore, Stores, Transcript } from './types.js';
import type { AsyncKnowledgeStore, KnowledgeStore } from './knowledge-types.js';

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

export type AsyncStores = { [K in AsyncStoreName]: Async<Stores[K]> } & {
  /** Makes every write made so far durable; call it before acknowledging anything outside the process. */
  commit(): Promise<void>;
  close(): Promise<void>;
};

/** `fn` with its result (or its synchronous throw) settled as a Promise. */
function settle<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => Promise<R> {
  return (...args) => {
    try {
      return Promise.resolve(fn(...args));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  };
}

/**
 * The synchronous stores of one data dir (SQLite, the embedded default) as AsyncStores: each call runs
 * at once and settles its Promise with the result. Closing closes them.
 */
export function asAsyncStores(stores: Stores): AsyncStores {
  const { events, transcript, runs, state, storage, artifacts } = stores;
  return {
    events: {
      append: settle((r) => events.append(r)),
      page: settle((q) => events.page(q)),
      findByEventId: settle((id) => events.findByEventId(id)),
      latestSeq: settle((c) => events.latestSeq(c)),
      conversations: settle((n) => events.conversations(n)),
    },
    transcript: {
      append: settle((i) => transcript.append(i)),
      page: settle((q) => transcript.page(q)),
      search: settle((q) => transcript.search(q)),
      latestSeq: settle((c) => transcript.latestSeq(c)),
    },
    runs: {
      create: settle((r) => runs.create(r)),
      finish: settle((id, status, error, at, tail) => runs.finish(id, status, error, at, tail)),
      addApiCall: settle((id, call) => runs.addApiCall(id, call)),
      addApiCalls: settle((entries) => runs.addApiCalls(entries)),
      addUnattributedCall: settle((call) => runs.addUnattributedCall(call)),
      unattributedCalls: settle((opts) => runs.unattributedCalls(opts)),
      addObserved: settle((id, n) => runs.addObserved(id, n)),
      addResult: settle((id, r) => runs.addResult(id, r)),
      addStateWrite: settle((id, w) => runs.addStateWrite(id, w)),
      addWarning: settle((id, w) => runs.addWarning(id, w)),
      get: settle((id) => runs.get(id)),
      list: settle((opts) => runs.list(opts)),
      running: settle(() => runs.running()),
      markInterrupted: settle((ids) => runs.markInterrupted(ids)),
    },
    state: {
      get: settle((sk, k) => state.get(sk, k)),
      set: settle((scope, sk, k, json, cols) => state.set(scope, sk, k, json, cols)),
      delete: settle((sk, k) => state.delete(sk, k)),
      list: settle((sk, prefix, limit) => state.list(sk, prefix, limit)),
      snapshot: settle((sk) => state.snapshot(sk)),
      entries: settle((f) => state.entries(f)),
    },
    storage: {
      get: settle((t, o, k) => storage.get(t, o, k)),
      set: settle((t, o, k, v) => storage.set(t, o, k, v)),
      delete: settle((t, o, k) => storage.delete(t, o, k)),
      list: settle((t, o, p) => storage.list(t, o, p)),
    },
    artifacts: {
      register: settle((a) => artifacts.register(a)),
      get: settle((id) => artifacts.get(id)),
      read: settle((r, off, len) => artifacts.read(r, off, len)),
      list: settle((f) => artifacts.list(f)),
    },
    commit: settle(() => stores.commit()),
    close: settle(() => stores.close()),
  };
}

/** The synchronous SQLite knowledge store in the Promise-returning form the engine and `lbot kb` use. */
export function asAsyncKnowledge(k: KnowledgeStore): AsyncKnowledgeStore {
  return {
    createBase: settle((b) => k.createBase(b)),
    getBase: settle((id) => k.getBase(id)),
    listBases: settle(() => k.listBases()),
    removeBase: settle((id) => k.removeBase(id)),
    documents: settle((id) => k.documents(id)),
    putDocument: settle((id, doc, chunks, version) => k.putDocument(id, doc, chunks, version)),
    removeDocuments: settle((id, sources) => k.removeDocuments(id, sources)),
    setVersion: settle((id, version) => k.setVersion(id, version)),
    resetDims: settle((id) => k.resetDims(id)),
    searchText: settle((id, words, filters, limit) => k.searchText(id, words, filters, limit)),
    searchVector: settle((id, vector, filters, limit) => k.searchVector(id, vector, filters, limit)),
    chunks: settle((rows) => k.chunks(rows)),
  };
}
