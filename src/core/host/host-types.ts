// The host's public shapes: what it needs (HostDeps), what one run is asked (RunRequest) and ends with
// (RunOutcome), and the Host itself. A module of types alone, so the host's parts and its observers
// import them without importing the host.
import type { Binding } from '../protocol/binding.js';
import type { EventEnvelope, JsonObject } from '../protocol/event.js';
import type { Config } from '../config.js';
import type { AsyncStores } from '../stores/async.js';
import type { ObservedNotice, RunOwner } from '../stores/types.js';
import type { Clock, KnowledgePort, ModelProvider, PluginLauncher, ProxyCall, RunnerCatalog, ToolProvider } from './ports.js';
import type { HostObserver } from './observer.js';
import type { RunOutcome } from './run-outcome.js';

export type { RunOutcome } from './run-outcome.js';
import type { Delivered } from './result-processor.js';
import type { SessionRegistry } from './session.js';

export type HostDeps = {
  stores: AsyncStores;
  launcher: PluginLauncher;
  /** The runners of the plugins directory (re-read on each run, so `dev` sees edits). */
  catalog(): Promise<RunnerCatalog>;
  config: Config;
  models: ModelProvider;
  /** The tool table of one run (native, skill, MCP and plugin tools), if any. */
  tools?(req: ToolsRequest): Promise<ToolProvider | undefined>;
  /** The knowledge bases runs may be granted, and retrieval (none when absent). */
  knowledge?: KnowledgePort;
  clock: Clock;
  version: string;
  /** The process that runs this host, recorded on each run so a crashed host's runs can be marked interrupted. */
  owner?: RunOwner;
  warn(message: string): void;
  /** Optional listener of every run and proxy call (dev dashboard, record/replay). */
  observer?: HostObserver;
  /** Extra `ctx.metadata` entries of one run (the MCP bridge endpoint for external harnesses). */
  runMetadata?(req: { binding: Binding; run_id: string }): JsonObject;
};

/** What the tool table of a run is built for; `vars` name the conversation for the box session template. */
export type ToolsRequest = {
  binding: Binding;
  run_id: string;
  vars?: { launcher_type: string; launcher_id: string; conversation_id: string | null; sender_id: string | null };
};

export type RunRequest = {
  event: EventEnvelope;
  /** The platform payload the event was normalized from; stored as an artifact and referenced by raw_ref. */
  raw?: unknown;
  binding: Binding;
  adapterParams?: Record<string, unknown> | null;
  /** The id the run gets (a server answers it before a queued run starts); default a fresh UUID. */
  run_id?: string;
  /** Aborting cancels the run; an LbotError `cancelled` as the reason is recorded as the run's error. */
  signal?: AbortSignal;
  onStarted?(run_id: string): void;
  onDelivered?(item: Delivered): void;
  onObserved?(run_id: string, notice: ObservedNotice): void;
};

export type Host = {
  run(req: RunRequest): Promise<RunOutcome>;
  /**
   * Starts a fresh process of a plugin (from `catalog`, else a re-read catalog) and routes new runs to it;
   * runs already in flight finish on the old process, which is then stopped. Without a process yet, it
   * starts one warm (default env). If the new process fails to start, the old one keeps serving and the
   * start error is thrown (hot reload, AC-176/AC-177).
   */
  reload(identity: string, catalog?: RunnerCatalog): Promise<void>;
  readonly sessions: SessionRegistry;
  /** Routes a proxy call that did not arrive on a plugin connection (the MCP bridge): same authorization and audit. */
  handle(call: ProxyCall): Promise<unknown>;
  /** Stops every plugin process this host started. Idempotent. */
  close(): Promise<void>;
};
