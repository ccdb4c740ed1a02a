// PluginLauncher: spawns a plugin with an allowlisted env in its own process group and performs
// `initialize`; failures become runner.start_failed naming the command and stderr (AC-018).
import { LbotError } from '../../core/errors.js';
import type { PluginConnection, PluginLauncher, PluginSpec, ProxyCallHandler } from '../../core/host/ports.js';
import { PROTOCOL_VERSION, RpcResultError, type Coalesce, type InitializeResult } from '../../core/protocol/index.js';
import { LBOT_VERSION } from '../../package-root.js';
import { RpcErrorReply, RpcTimeoutError, StdioPluginConnection, type PluginWarning } from './connection.js';
import { buildPluginEnv } from './env.js';
import type { PluginSandbox } from './sandbox.js';
import { DEFAULT_BOOTSTRAP, resolveCommand } from './spawn.js';
import { spawnConnection } from './spawn-connection.js';

export const DEFAULT_INITIALIZE_TIMEOUT_MS = 20_000;

export type PluginLauncherOptions = {
  /** How long `initialize` may take; default 20 s (runner-protocol.md §11). */
  initializeTimeoutMs?: number;
  /** Grace periods of close(); default 2 s each. */
  graceMs?: number;
  shutdownTimeoutMs?: number;
  /** Path of the SDK bootstrap for `execution.node`; default the built sdk/plugin-main. */
  bootstrapPath?: string;
  /** The environment the allowlist is taken from; default process.env. */
  hostEnv?: NodeJS.ProcessEnv;
  onWarning?: (warning: PluginWarning) => void;
  onStderr?: (identity: string, line: string) => void;
  /** Runs every plugin process in this sandbox (per its isolation mode); default: unisolated. */
  sandbox?: PluginSandbox;
  /** The Python of LangBot SDK plugins (`execution.python`; config `langbot.python`). */
  langbotPython?: string | undefined;
  /** Called with every connection right after its process is spawned, before `initialize` or the LangBot handshake (cleanup checks). */
  onSpawn?: (connection: PluginConnection) => void;
  /**
   * How the lines to each plugin are gathered into writes (LineWriter). A host that starts many runs at once
   * (serve, worker) takes `loop`: the run requests of one turn of the event loop reach the runner in one
   * write: 4–9 % less of serve's CPU per run and about 30 % less of its runner's (docs/benchmarks.md).
   */
  coalesce?: Coalesce | undefined;
};

function tailNote(connection: StdioPluginConnection): string {
  const tail = connection.stderrTail().trim();
  return tail ? `; stderr:\n${tail}` : '; it wrote nothing to stderr';
}

async function failStart(
  connection: StdioPluginConnection,
  message: string,
  code: 'runner.start_failed' | 'runner.protocol_error' = 'runner.start_failed',
): Promise<never> {
  await connection.kill();
  throw new LbotError(code, message, {
    details: { plugin: connection.identity, command: connection.command, stderr_tail: connection.stderrTail() },
    hint: code === 'runner.start_failed' ? 'check the plugin manifest execution block and run the command by hand in the plugin directory' : undefined,
  });
}

/** A spawned plugin process that has not been sent `initialize` yet (`dev` keeps one on standby). */
export type PreparedPlugin = {
  readonly connection: StdioPluginConnection;
  /** Performs `initialize`; resolves with the live connection or rejects like `start`. */
  initialize(opts?: { signal?: AbortSignal }): Promise<PluginConnection>;
};

/** A launcher that can also spawn now and initialize later. */
export type PreparingLauncher = PluginLauncher & { prepare(spec: PluginSpec, onApiCall: ProxyCallHandler): PreparedPlugin };

/** Creates the launcher the host uses to start plugin processes. */
export function createPluginLauncher(opts: PluginLauncherOptions = {}): PreparingLauncher {
  const initializeTimeoutMs = opts.initializeTimeoutMs ?? DEFAULT_INITIALIZE_TIMEOUT_MS;
  const prepare = (spec: PluginSpec, onApiCall: ProxyCallHandler): PreparedPlugin => {
    const cmd = resolveCommand(spec.execution, spec.dir, opts.bootstrapPath ?? DEFAULT_BOOTSTRAP);
    const env = buildPluginEnv(spec.identity, spec.env, opts.hostEnv);
    const { connection, command } = spawnConnection(spec, cmd, env, onApiCall, opts, (o) => new StdioPluginConnection(o));
    return { connection, initialize: (startOpts = {}) => initialize(spec, connection, command, startOpts) };
  };
  const initialize = async (
    spec: PluginSpec,
    connection: StdioPluginConnection,
    command: string,
    startOpts: { signal?: AbortSignal },
  ): Promise<PluginConnection> => {
    let init: InitializeResult;
    try {
      init = await connection.request(
        'initialize',
        { protocol_version: PROTOCOL_VERSION, host: { name: 'lbot', version: LBOT_VERSION } },
        { timeoutMs: initializeTimeoutMs, signal: startOpts.signal },
      );
    } catch (err) {
      if (connection.spawnError) {
        return failStart(connection, `could not start plugin ${spec.identity}: ${command}: ${connection.spawnError.message} (cwd ${spec.dir})`);
      }
      if (err instanceof RpcTimeoutError) {
        return failStart(
          connection,
          `plugin ${spec.identity} did not answer initialize within ${initializeTimeoutMs} ms (command: ${command})${tailNote(connection)}`,
        );
      }
      if (err instanceof RpcResultError) {
        return failStart(connection, `plugin ${spec.identity} answered initialize with an invalid result: ${err.issue}`, 'runner.protocol_error');
      }
      if (err instanceof RpcErrorReply) {
        return failStart(
          connection,
          `plugin ${spec.identity} refused initialize with error ${err.rpcCode}: ${err.message} (command: ${command})${tailNote(connection)}`,
        );
      }
      if (err instanceof LbotError && err.code === 'cancelled') {
        await connection.kill();
        throw err;
      }
      if (err instanceof LbotError && err.code === 'runner.protocol_error') {
        return failStart(connection, `${err.message} (during initialize; command: ${command})`, 'runner.protocol_error');
      }
      await connection.exited;
      const how = connection.describeExit();
      return failStart(connection, `plugin ${spec.identity} ${how} before answering initialize (command: ${command})${tailNote(connection)}`);
    }
    const claimed = `${init.plugin.author}/${init.plugin.name}`;
    if (claimed !== spec.identity) {
      return failStart(
        connection,
        `plugin in ${spec.dir} says it is ${claimed} in its initialize answer, but its manifest.yaml names ${spec.identity}`,
        'runner.protocol_error',
      );
    }
    return connection;
  };
  return {
    prepare,
    async start(spec: PluginSpec, onApiCall: ProxyCallHandler, startOpts: { signal?: AbortSignal } = {}): Promise<PluginConnection> {
      startOpts.signal?.throwIfAborted();
      // A LangBot SDK plugin speaks LangBot's own wire: a second transport behind the same port, loaded
      // only for such a plugin.
      if ('python' in spec.execution) {
        const { startLangbotPlugin } = await import('./langbot-launcher.js');
        return startLangbotPlugin(
          spec,
          onApiCall,
          {
            python: opts.langbotPython,
            hostEnv: opts.hostEnv,
            startTimeoutMs: initializeTimeoutMs,
            graceMs: opts.graceMs,
            shutdownTimeoutMs: opts.shutdownTimeoutMs,
            sandbox: opts.sandbox,
            onWarning: opts.onWarning,
            onStderr: opts.onStderr,
            onSpawn: opts.onSpawn,
          },
          startOpts,
        );
      }
      return prepare(spec, onApiCall).initialize(startOpts);
    },
  };
}
