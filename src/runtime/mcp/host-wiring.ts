// What a local host (`lbot run`, `lbot serve`) gets from the MCP subsystem: the MCP part of each run's
// tool table, and one owner to close with the host.
import type { Config } from '../../core/config.js';
import type { ToolProvider } from '../../core/host/ports.js';
import type { Binding } from '../../core/protocol/binding.js';
import type { McpConnector } from './connectors.js';
import { McpManager } from './manager.js';
import { createMcpToolProvider } from './tool-provider.js';

export type McpHostOptions = {
  dataDir: string;
  config: Config;
  warn(message: string): void;
  /** serve: start servers at boot, follow config edits, publish state as `serve`. */
  mode: 'serve' | 'run';
  /** The deadline of a live run, epoch seconds, or null. */
  deadlineOf(run_id: string): number | null;
  boxConnector?: McpConnector | undefined;
};

export type McpHost = {
  manager: McpManager;
  /** The `tools` dependency of createHost: the MCP tools a run may be granted. */
  tools(req: { binding: Binding; run_id: string }): Promise<ToolProvider | undefined>;
  close(): Promise<void>;
};

export function openMcpHost(opts: McpHostOptions): McpHost {
  const serve = opts.mode === 'serve';
  const manager = new McpManager({
    dataDir: opts.dataDir,
    config: opts.config,
    warn: opts.warn,
    boxConnector: opts.boxConnector,
    publishAs: opts.mode,
    eager: serve,
    watchConfig: serve,
  });
  return {
    manager,
    tools: (req) => createMcpToolProvider(manager, req.binding, { deadlineOf: opts.deadlineOf }),
    close: () => manager.close(),
  };
}
