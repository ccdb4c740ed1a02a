// What a local host (`lbot run`, `lbot serve`) gets from the MCP subsystem: the MCP part of each run's
// tool table, the per-run bridge endpoint in ctx.metadata, and one owner to close with the host.
import type { Config } from '../../core/config.js';
import { LbotError } from '../../core/errors.js';
import type { Host } from '../../core/host/host.js';
import type { ToolProvider } from '../../core/host/ports.js';
import type { Binding } from '../../core/protocol/binding.js';
import type { JsonObject } from '../../core/protocol/event.js';
import { ToolManager } from '../../core/tools/manager.js';
import { BridgeServer } from './bridge-server.js';
import { readMcpConfig } from './config.js';
import type { ConfigFollower } from '../config-follower.js';
import type { McpManager } from './manager.js';
import type { McpToolSource } from './tool-source.js';

export type McpHostOptions = {
  dataDir: string;
  config: Config;
  warn(message: string): void;
  /** serve: start servers at boot, follow config edits, publish state as `serve`. */
  mode: 'serve' | 'run';
  /** serve: the config follower whose edits the MCP servers follow. */
  follow?: ConfigFollower | undefined;
  /** The host the bridge routes calls through (bound late: the host is built after this). */
  host(): Host;
};

export type McpHost = {
  /** The MCP tool sources of a run, for a tool manager that merges them with native, skill and plugin tools. */
  sources(req: { binding: Binding; run_id: string }): Promise<McpToolSource[]>;
  /** The `tools` dependency of createHost when MCP is the only tool source: a tool table of MCP tools. */
  tools(req: { binding: Binding; run_id: string }): Promise<ToolProvider | undefined>;
  /** The `runMetadata` dependency of createHost: `ctx.metadata.mcp_bridge` of a run (when the bridge is enabled). */
  runMetadata(req: { binding: Binding; run_id: string }): JsonObject;
  close(): Promise<void>;
};

export function openMcpHost(opts: McpHostOptions): McpHost {
  const serve = opts.mode === 'serve';
  const { settings, servers } = readMcpConfig(opts.config);
  // The MCP client (and its SDK, about 12 MB of serve's memory) loads on first need: `serve` once the
  // config has a server (at boot or by a later edit), `run` only when a run has tools.
  let manager: Promise<McpManager> | undefined;
  const getManager = () =>
    (manager ??= Promise.all([import('./manager.js'), import('./box-connector.js')]).then(
      ([{ McpManager }, { createBoxConnector }]) =>
        new McpManager({
          dataDir: opts.dataDir,
          config: opts.follow?.current() ?? opts.config,
          warn: opts.warn,
          boxConnector: createBoxConnector({ dataDir: opts.dataDir, config: opts.config.box, owner: serve ? 'serve' : 'cli', warn: opts.warn }),
          publishAs: opts.mode,
          eager: serve,
          follow: serve ? opts.follow : undefined,
        }),
    ));
  let unfollow: (() => void) | undefined;
  if (serve) {
    const startOnce = (config: Config) => {
      if (manager || readMcpConfig(config).servers.length === 0) return;
      unfollow?.();
      void getManager().catch((err: unknown) => opts.warn(`MCP servers could not start: ${err instanceof Error ? err.message : String(err)}`));
    };
    // From then on the manager follows the edits itself.
    unfollow = opts.follow?.subscribe((config) => startOnce(config));
    startOnce(opts.follow?.current() ?? opts.config);
  }
  const deadlineOf = (run_id: string) => opts.host().sessions.get(run_id)?.deadline_at ?? null;
  const bridge = new BridgeServer({
    dataDir: opts.dataDir,
    port: { handle: (call) => opts.host().handle(call), session: (run_id) => opts.host().sessions.get(run_id) },
    warn: opts.warn,
  });
  const tables = new ToolManager(opts.warn);
  const sources = async (req: { binding: Binding; run_id: string }): Promise<McpToolSource[]> => {
    const ready = serve ? manager : servers.some((s) => s.enabled) ? getManager() : undefined;
    return ready ? (await ready).sources(req.binding, deadlineOf) : [];
  };
  return {
    sources,
    tools: async (req) => tables.forRun(await sources(req), req.binding.resource_policy),
    runMetadata: (req) => {
      if (!settings.bridge.enabled) return {};
      try {
        return { mcp_bridge: bridge.register(req.run_id) };
      } catch (err) {
        // An unsafe socket directory costs the run its bridge, not the run itself.
        if (!(err instanceof LbotError)) throw err;
        opts.warn(`${err.message}; run ${req.run_id} has no MCP bridge`);
        return {};
      }
    },
    close: async () => {
      unfollow?.();
      bridge.close();
      if (manager) await (await manager).close();
    },
  };
}
