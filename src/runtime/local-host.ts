// The composition root of `lbot run` / `serve` / `dev`: the stores (SQLite or PostgreSQL), plugin launcher, model provider,
// runner catalog and clock wired into one Host.
import type { Config } from '../core/config.js';
import { createHost, type Host, type ToolsRequest } from '../core/host/host.js';
import type { ModelProvider, PluginLauncher, RunnerCatalog, ToolProvider } from '../core/host/ports.js';
import type { HostObserver } from '../core/host/observer.js';
import type { Binding } from '../core/protocol/binding.js';
import type { Coalesce } from '../core/protocol/index.js';
import { loadCatalog } from './catalog.js';
import { LBOT_VERSION } from '../package-root.js';
import { systemClock } from './clock.js';
import { createKnowledgeEngine } from './knowledge/engine.js';
import { OWNER } from './run-owner.js';
import { openHostStores, type HostStores } from './stores/open.js';
import { createModelProvider } from './models/providers.js';
import { createLocalLauncher } from './plugins/local-launcher.js';
import type { IsolationMode } from './plugins/sandbox.js';
import { openMcpHost } from './mcp/host-wiring.js';
import type { RunTools } from './tools/run-tools.js';
import type { BoxService } from './box/service.js';
import type { ConfigFollower } from './config-follower.js';

export type LocalHostOptions = {
  dataDir: string;
  /** A postgres:// URL for the run stores (--store / LBOT_DATABASE_URL); absent or null: SQLite in the data dir. */
  databaseUrl?: string | null | undefined;
  /** Group commit of the SQLite writes over this many ms (serve, run); absent: every write commits at once. */
  commitWindowMs?: number;
  /** A plugins directory (each subdirectory is a plugin)… */
  pluginsDir: string;
  /** …or one plugin directory, which then is the only plugin. */
  pluginDir?: string | undefined;
  config: Config;
  warn(message: string): void;
  tools?(req: ToolsRequest): Promise<ToolProvider | undefined>;
  /** Overrides plugins.isolation (a non-loopback serve turns auto into sandbox). */
  isolation?: IsolationMode | undefined;
  /** How the lines to plugins are gathered into writes: `loop` where many runs start at once (serve, worker). */
  pluginWrites?: Coalesce | undefined;
  /** Replaces the plugin launcher (`dev` keeps processes on standby; `run` hands over the process it started first). */
  launcher?: PluginLauncher | undefined;
  /** Replaces the catalog the host reads (`dev` serves the last good one). */
  catalog?: (() => Promise<RunnerCatalog>) | undefined;
  /** Hooks for record/replay: wrap the model provider and the per-run tool tables, observe runs. */
  decorateModels?: ((provider: ModelProvider) => ModelProvider) | undefined;
  decorateTools?: ((tools: ToolsFactory | undefined) => ToolsFactory | undefined) | undefined;
  observer?: HostObserver | undefined;
  /** MCP servers (when `tools` is not given): `serve` starts them at boot and follows config edits; `run` starts them on first need. */
  mcpMode?: 'serve' | 'run';
  /**
   * A long-lived host follows config edits: each run reads the bindings' models and the config as they are
   * now, and MCP servers are reconciled. Without it the host keeps `config`.
   */
  follow?: ConfigFollower | undefined;
};

type ToolsFactory = (req: { binding: Binding; run_id: string }) => Promise<ToolProvider | undefined>;

export type LocalHost = {
  host: Host;
  stores: HostStores;
  /** The box service behind the native tools (null when the caller supplied its own tools). */
  box(): Promise<BoxService | null>;
  catalog(): Promise<RunnerCatalog>;
  close(): Promise<void>;
};

export { BUNDLED_RUNNERS_DIR, loadCatalog } from './catalog.js';

/** How long a discovered catalog is reused: `serve` picks up added or edited plugins within this time. */
const CATALOG_TTL_MS = 1000;

/** Reuses a catalog for `ttlMs` instead of re-reading every manifest on every run. */
function cachedCatalog(load: () => Promise<RunnerCatalog>, ttlMs: number): () => Promise<RunnerCatalog> {
  let cached: { at: number; value: Promise<RunnerCatalog> } | undefined;
  return () => {
    const now = Date.now();
    if (!cached || now - cached.at > ttlMs) {
      const value = load();
      cached = { at: now, value };
      value.catch(() => (cached = undefined));
    }
    return cached.value;
  };
}

export async function openLocalHost(opts: LocalHostOptions): Promise<LocalHost> {
  const stores = await openHostStores(opts.dataDir, opts.databaseUrl ?? null, { commitWindowMs: opts.commitWindowMs ?? 0 });
  const launcher = opts.launcher ?? createLocalLauncher(opts);
  const catalog = opts.catalog ?? cachedCatalog(() => loadCatalog(opts.pluginsDir, opts.pluginDir), CATALOG_TTL_MS);
  const follow = opts.follow;
  const currentConfig = (): Config => follow?.current() ?? opts.config;
  const models = createModelProvider(() => currentConfig().models);
  const decoratedModels = opts.decorateModels ? opts.decorateModels(models) : models;
  const mcp = opts.tools
    ? null
    : openMcpHost({ dataDir: opts.dataDir, config: opts.config, warn: opts.warn, mode: opts.mcpMode ?? 'run', follow, host: () => host });
  // Box and tool modules load on the first run that may call tools (most `lbot run`s never do).
  let runTools: Promise<RunTools> | undefined;
  const getRunTools = () =>
    (runTools ??= import('./tools/run-tools.js').then(({ createRunTools }) =>
      createRunTools({
        dataDir: opts.dataDir,
        config: opts.config,
        owner: opts.mcpMode === 'serve' ? 'serve' : 'cli',
        warn: opts.warn,
        ...(mcp ? { extraSources: (req) => mcp.sources(req) } : {}),
      }),
    ));
  const baseTools = opts.tools ?? (async (req: ToolsRequest) => (await getRunTools()).tools(req));
  const tools = opts.decorateTools ? opts.decorateTools(baseTools) : baseTools;
  const host = createHost({
    stores,
    launcher,
    catalog,
    // Read at each run (bindings' models, plugin settings), so a followed config edit reaches the next run.
    get config() {
      return currentConfig();
    },
    models: decoratedModels,
    ...(tools ? { tools } : {}),
    knowledge: createKnowledgeEngine({ store: stores.knowledge, models: decoratedModels, configBases: opts.config.knowledge_bases }),
    clock: systemClock,
    version: LBOT_VERSION,
    owner: OWNER,
    warn: opts.warn,
    ...(opts.observer ? { observer: opts.observer } : {}),
    ...(mcp ? { runMetadata: mcp.runMetadata } : {}),
  });
  let closing: Promise<void> | undefined;
  return {
    host,
    stores,
    box: async () => (opts.tools ? null : (await getRunTools()).box),
    catalog,
    close: () =>
      (closing ??= (async () => {
        await host.close();
        await mcp?.close();
        await stores.close();
      })()),
  };
}
