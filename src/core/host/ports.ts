// Interfaces core/host declares and runtime/ implements: plugin processes, model providers, tools, clock.
import type { RunParams, RunReply } from '../protocol/wire.js';
import type { Execution, RunnerDescriptor } from '../protocol/manifest.js';
import type { Message } from '../protocol/context.js';
import type { JsonObject } from '../protocol/event.js';
import type { ModelReply, ModelUsage } from '../protocol/proxy.js';
import type { KnowledgeBaseInfo, KnowledgeFilter, RetrievalEntry } from '../protocol/knowledge.js';

/** One plugin → host proxy request, with the identity stamped from the connection it arrived on. */
export type ProxyCall = {
  caller_plugin: string;
  method: string;
  params: Record<string, unknown>;
  /** Aborted when the plugin connection closes. */
  signal: AbortSignal;
  /** For `models.stream`: sends one `models.stream/chunk` notification to the caller. */
  notify(method: string, params: JsonObject): void;
};

/**
 * Answers a proxy call. Resolves with the JSON-RPC result, or rejects with an `ApiError`
 * (host/api-error.ts), which the connection turns into a -32000 error with `data: AgentAPIError`.
 */
export type ProxyCallHandler = (call: ProxyCall) => Promise<unknown>;

/** What the host needs to start one plugin process. */
export type PluginSpec = {
  /** `author/name`. */
  identity: string;
  dir: string;
  execution: Execution;
  /** Extra, non-secret variables from the binding; added to the allowlisted env. */
  env: Record<string, string>;
  /** Network for a sandboxed process: the manifest's grant, narrowed by the binding (default none). */
  network?: boolean;
};

/** Why a connection ended; the host turns it into the error of every run still in flight. */
export type ConnectionFailure = {
  code: 'runner.crashed' | 'runner.protocol_error' | 'runner.start_failed';
  message: string;
};

/** A live plugin process speaking JSON-RPC over stdio. */
export interface PluginConnection {
  readonly identity: string;
  /** The process group id (for cleanup checks). */
  readonly pgid: number | null;
  /**
   * Sends `run` and resolves with the plugin's reply once the runner is done. Each `run/result` for
   * this run_id is passed to `onResult` in arrival order. Rejects with an LbotError
   * (`runner.crashed` / `runner.protocol_error`) when the connection fails while the run is in flight.
   */
  run(params: RunParams, onResult: (result: unknown) => void): Promise<RunReply>;
  /** Sends the `run/cancel` notification; the run's promise still settles on its own. */
  cancel(run_id: string): void;
  /** Run ids in flight on this connection. */
  activeRuns(): readonly string[];
  /** Last lines of the process's stderr (for crash messages and the run log). */
  stderrTail(): string;
  /** Graceful stop: `shutdown` request, end stdin, grace, SIGTERM to the group, grace, SIGKILL. Idempotent. */
  close(): Promise<void>;
  /** SIGKILL the whole process group at once (a runner that ignores cancel). */
  kill(): Promise<void>;
  /** Resolves when the process has exited, with the failure that ended it (null after close()). */
  readonly exited: Promise<ConnectionFailure | null>;
  /** False from the moment the connection failed or began stopping, before the process has exited. */
  readonly accepting: boolean;
}

export interface PluginLauncher {
  /**
   * Spawns the plugin, performs `initialize`, and returns the live connection.
   * Rejects with LbotError `runner.start_failed` (spawn failure, exit before initialize,
   * initialize timeout) or `runner.protocol_error` (bad initialize answer).
   */
  start(spec: PluginSpec, onApiCall: ProxyCallHandler, opts?: { signal?: AbortSignal }): Promise<PluginConnection>;
}

/** One chat call as the host hands it to a provider, after grants and the extra_args policy. */
export type ModelCall = {
  model_id: string;
  messages: Message[];
  tools: JsonObject[];
  extra_args: JsonObject;
  /** The call's value; absent means the model's configured `remove_think`. */
  remove_think?: boolean | undefined;
  /** The run deadline (epoch seconds): no upstream attempt outlives it. */
  deadline_at: number | null;
  /** The run's signal: aborting it closes the upstream request. */
  signal: AbortSignal;
};
type Bounded = { model_id: string; deadline_at: number | null; signal: AbortSignal };

/** A configured model the host can call for a runner. */
export interface ModelProvider {
  invoke(req: ModelCall): Promise<ModelReply>;
  /** Streams the reply: `onChunk` gets the text so far (and complete tool calls at the end). */
  stream(req: ModelCall, onChunk: (chunk: JsonObject) => void): Promise<ModelReply>;
  rerank(req: Bounded & { query: string; documents: string[]; top_n?: number | null | undefined }): Promise<Array<{ index: number; relevance_score: number }>>;
  embed(req: Bounded & { input: string[] }): Promise<{ embeddings: number[][]; model: string | null; usage: ModelUsage | null }>;
  countTokens(req: {
    model_id: string;
    messages: Message[];
    text?: string | undefined;
    tools: JsonObject[];
  }): Promise<{ tokens: number; context_window: number | null; tokenizer: string }>;
  /** Starts loading what the first call of these models needs (their SDK, a client), so it does not wait for it. Never fails. */
  prepare?(model_ids: readonly string[]): void;
}

/** A tool visible to runners through the tool manager (native, skill, MCP or plugin tool). */
export type ToolDescriptor = {
  name: string;
  tool_type: string;
  description: string;
  parameters: JsonObject;
};

/** The run's tool table: what exists at build time, and how to call it. */
export interface ToolProvider {
  list(): Promise<ToolDescriptor[]>;
  call(name: string, parameters: JsonObject, ctx: { run_id: string; signal: AbortSignal }): Promise<unknown>;
  /** Whether the run's table has a tool of this name at all, granted or not. */
  has?(name: string): boolean;
}

/** Time, injected so core/ owns no timers of its own. */
/** One retrieval, as the host hands it to the knowledge engine. */
export type KnowledgeQuery = {
  query: string;
  top_k: number;
  filters: readonly KnowledgeFilter[];
  /** A model that reorders the candidates; the host has checked the run may use it. */
  rerank_model_id: string | null;
  deadline_at: number | null;
  signal: AbortSignal;
};

/** The knowledge bases runs may be granted, and retrieval from one of them (docs/knowledge.md). */
export interface KnowledgePort {
  list(): Promise<KnowledgeBaseInfo[]>;
  /** Ranked entries of base `kb_id`; `kb.not_found` when there is no such base. */
  retrieve(kb_id: string, q: KnowledgeQuery): Promise<RetrievalEntry[]>;
}

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /**
   * Calls `fire` after `ms` milliseconds unless the returned function cancels it first. Cancelling
   * matters: a timer left to fire keeps what it closes over alive until then.
   */
  after(ms: number, fire: () => void): () => void;
}

/** The runners and plugins found in the plugins directory. */
export type RunnerCatalog = {
  runners: readonly RunnerDescriptor[];
  plugins: ReadonlyMap<string, Omit<PluginSpec, 'env'>>;
  warnings: readonly string[];
};
