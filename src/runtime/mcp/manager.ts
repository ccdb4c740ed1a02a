// The MCP client manager: one session per configured server, started eagerly (serve) or on first need
// (run), reconciled with config edits, published for `lbot mcp list`, and closed with its host.
import type { Config, ModelConfig } from '../../core/config.js';
import type { ModelProvider } from '../../core/host/ports.js';
import type { Binding } from '../../core/protocol/binding.js';
import type { ConfigFollower } from '../config-follower.js';
import { readMcpConfig, type McpServerRecord, type McpSettings } from './config.js';
import { connectHostStdio, remoteConnector, type McpConnector } from './connectors.js';
import { McpPhaseError } from './errors.js';
import { LiveStateWriter } from './live-state.js';
import { flattenError } from './results.js';
import { createSampler } from './sampling.js';
import { McpSession, type McpRuntimeInfo, type SessionOptions } from './session.js';
import { bindingMayUseMcp, McpToolSource } from './tool-source.js';

export type McpManagerOptions = {
  /** The data dir (live state files). */
  dataDir: string;
  config: Config;
  warn(message: string): void;
  /** Connects box-hosted stdio servers; absent → they fail with phase box_unavailable. */
  boxConnector?: McpConnector | undefined;
  /** Publish runtime info under `<data-dir>/mcp/live/` with this owner kind (`serve`, `run`). */
  publishAs?: string | undefined;
  /** Reconcile with every config edit the follower reports (serve). */
  follow?: ConfigFollower | undefined;
  /** Start every enabled server at once instead of on first need. */
  eager?: boolean;
};

export type McpServerStatus = { record: McpServerRecord; runtime_info: McpRuntimeInfo };

const BOX_START_EXTRA_MS = 30_000;

/** The connector for box-hosted servers when no box is wired in. */
const noBox: McpConnector = (record) =>
  Promise.reject(new McpPhaseError('box_unavailable', `MCP server ${record.name} runs in the box, but no box backend is available (box_unavailable)`));

export class McpManager {
  readonly #o: McpManagerOptions;
  readonly #sessions = new Map<string, McpSession>();
  readonly #warned = new Set<string>();
  #settings: McpSettings;
  #models: readonly ModelConfig[];
  #provider: Promise<ModelProvider> | null = null;
  #live: LiveStateWriter | null = null;
  #liveTimer: NodeJS.Timeout | null = null;
  #unfollow: (() => void) | null = null;
  #closing: Promise<void> | undefined;

  constructor(opts: McpManagerOptions) {
    this.#o = opts;
    const mcp = readMcpConfig(opts.config);
    this.#settings = mcp.settings;
    this.#models = opts.config.models;
    if (opts.publishAs) this.#live = new LiveStateWriter(opts.dataDir, opts.publishAs);
    for (const record of mcp.servers) this.#sessions.set(record.name, this.#createSession(record, false));
    if (opts.eager) this.startAll();
    if (opts.follow) {
      this.#unfollow = opts.follow.subscribe((config) => {
        if (this.#closing) return;
        this.reconcile(config).catch((err: unknown) => this.#o.warn(`MCP: applying the changed config failed: ${flattenError(err)}`));
      });
    }
  }

  get settings(): McpSettings {
    return this.#settings;
  }

  /** A session for one record; `transient` sessions are for `lbot mcp test|tools|call`. */
  createSession(record: McpServerRecord, transient: boolean, user?: Pick<SessionOptions, 'elicitation' | 'prompt'>): McpSession {
    return this.#createSession(record, transient, user);
  }

  #createSession(record: McpServerRecord, transient: boolean, user?: Pick<SessionOptions, 'elicitation' | 'prompt'>): McpSession {
    const connector: McpConnector =
      record.transport !== 'stdio' ? remoteConnector(this.#o.dataDir) : record.in_box ? (this.#o.boxConnector ?? noBox) : connectHostStdio;
    const startTimeoutMs =
      record.transport === 'stdio' && record.in_box ? record.box.startup_timeout_sec * 1000 + BOX_START_EXTRA_MS : this.#settings.start_timeout_sec * 1000;
    return new McpSession(record, {
      connector,
      startTimeoutMs,
      retryDelaysMs: this.#settings.retry_delays_sec.map((s) => s * 1000),
      transient,
      log: (m) => this.#o.warn(m),
      onChange: () => this.#publishSoon(),
      sampler: createSampler(record, { models: () => this.#models, provider: () => this.#modelProvider() }),
      ...user,
    });
  }

  /** The host's model provider over the configured models, loaded only when a server samples. */
  #modelProvider(): Promise<ModelProvider> {
    this.#provider ??= import('../models/providers.js').then(({ createModelProvider }) => createModelProvider(this.#models));
    return this.#provider;
  }

  sessions(): McpSession[] {
    return [...this.#sessions.values()];
  }

  get(name: string): McpSession | undefined {
    return this.#sessions.get(name);
  }

  /** Starts every enabled server (each connects in the background). */
  startAll(): void {
    for (const s of this.#sessions.values()) void s.start();
    this.#publishSoon();
  }

  /**
   * The tool sources of one run: when the binding may be granted MCP tools, waits until every enabled
   * server has had its first connection attempt (retries run on in the background) and returns one
   * source per connected server. Names are assigned by the tool manager (core/tools/manager.ts).
   */
  async sources(binding: Pick<Binding, 'resource_policy'>, deadlineOf: (run_id: string) => number | null): Promise<McpToolSource[]> {
    if (!bindingMayUseMcp(binding)) return [];
    const enabled = [...this.#sessions.values()].filter((s) => s.record.enabled);
    await Promise.all(enabled.map((s) => s.firstOutcome()));
    const opts = { callTimeoutMs: this.#settings.call_timeout_sec * 1000, prefixAll: this.#settings.tool_name_prefix, deadlineOf };
    return enabled.filter((s) => s.status === 'connected').map((s) => new McpToolSource(s, opts));
  }

  /** Reports a warning once per manager (collision renames are reported once, not per run). */
  warnOnce(message: string): void {
    if (this.#warned.has(message)) return;
    this.#warned.add(message);
    this.#o.warn(message);
  }

  /** Records and runtime info of every configured server. */
  statuses(): McpServerStatus[] {
    return [...this.#sessions.values()].map((s) => ({ record: s.record, runtime_info: s.runtimeInfo() }));
  }

  /** Applies a new config: removed servers stop, changed ones restart, new ones start (when eager). */
  async reconcile(config: Config): Promise<void> {
    const mcp = readMcpConfig(config);
    this.#settings = mcp.settings;
    this.#models = config.models;
    this.#provider = null;
    const wanted = new Map(mcp.servers.map((r) => [r.name, r]));
    const stopping: Promise<void>[] = [];
    for (const [name, session] of this.#sessions) {
      const next = wanted.get(name);
      if (next && sameRecord(next, session.record)) continue;
      this.#sessions.delete(name);
      stopping.push(session.close());
    }
    await Promise.allSettled(stopping);
    for (const [name, record] of wanted) {
      if (this.#sessions.has(name)) continue;
      const session = this.#createSession(record, false);
      this.#sessions.set(name, session);
      if (this.#o.eager) void session.start();
    }
    this.#publishSoon();
  }

  #publishSoon(): void {
    if (!this.#live || this.#liveTimer || this.#closing) return;
    this.#liveTimer = setTimeout(() => {
      this.#liveTimer = null;
      this.#publish();
    }, 50);
    this.#liveTimer.unref();
  }

  #publish(): void {
    if (!this.#live || this.#closing) return;
    const servers: Record<string, { uuid: string | null; runtime_info: McpRuntimeInfo }> = {};
    for (const s of this.#sessions.values()) servers[s.name] = { uuid: s.record.uuid ?? null, runtime_info: s.runtimeInfo() };
    try {
      this.#live.write(servers);
    } catch (err) {
      this.warnOnce(`MCP: cannot publish session state under ${this.#o.dataDir}: ${flattenError(err)}`);
    }
  }

  /** Stops every session and its server process. Idempotent. */
  close(): Promise<void> {
    return (this.#closing ??= (async () => {
      this.#unfollow?.();
      if (this.#liveTimer) clearTimeout(this.#liveTimer);
      const all = [...this.#sessions.values()];
      this.#sessions.clear();
      await Promise.allSettled(all.map((s) => s.close()));
      this.#live?.close();
    })());
  }
}

function sameRecord(a: McpServerRecord, b: McpServerRecord): boolean {
  const strip = ({ updated_at: _u, ...rest }: McpServerRecord) => rest;
  return JSON.stringify(strip(a)) === JSON.stringify(strip(b));
}
