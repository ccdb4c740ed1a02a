// `lbot serve`: a warm local host behind the HTTP API, with graceful shutdown on SIGTERM / SIGINT.
import type { AddressInfo } from 'node:net';
import type { ConfigFile } from '../../core/stores/config-file.js';
import { LbotError } from '../../core/errors.js';
import { openLocalHost, type LocalHost, type LocalHostOptions } from '../local-host.js';
import { buildServer } from './app.js';
import { RunManager } from './run-manager.js';
import type { RunGateway } from './run-gateway.js';
import { startDelivery, startDiscordGateways, startTelegramPolling } from '../delivery/start.js';
import { Scheduler } from '../schedule/scheduler.js';
import { startEventRun } from './event-router.js';
import { resolveServeToken } from './token.js';
import { isLoopbackHost, MIN_REMOTE_TOKEN_LENGTH } from './loopback.js';
import type { Config } from '../../core/config.js';
import { followConfig } from '../config-follower.js';
import { combineObservers } from '../../core/host/observer.js';
import type { ServeLogger } from './logger.js';
import { logObserver } from './log-observer.js';
import { isolationModeFor, pluginSandboxFor, type IsolationMode } from '../plugins/sandbox.js';

export { isLoopbackHost, MIN_REMOTE_TOKEN_LENGTH } from './loopback.js';

export type ServeOptions = {
  dataDir: string;
  /** The run stores on PostgreSQL (--store); null or absent: SQLite in the data dir. */
  databaseUrl?: string | null | undefined;
  pluginsDir: string;
  configFile: ConfigFile;
  host?: string | undefined;
  port?: number | undefined;
  env?: NodeJS.ProcessEnv;
  warn(message: string): void;
  log?(line: string): void;
  /** The operator log (requests, runs, plugin processes, webhook refusals, config reloads). */
  logger?: ServeLogger | undefined;
  /** Extra owners to close on shutdown (box reaper, MCP servers, dev watcher). */
  onClose?: Array<() => Promise<void>>;
  /** Local host wiring `dev` changes: one plugin dir, the last-good catalog, a run observer. */
  hostHooks?: Pick<LocalHostOptions, 'pluginDir' | 'catalog' | 'observer' | 'launcher'>;
  /** Long-poll every Telegram account with getUpdates (no public webhook URL needed). */
  telegramPoll?: boolean;
  /** Connect every Discord account to the Discord gateway (WebSocket) for MESSAGE_CREATE. */
  discordGateway?: boolean;
  /** Hand accepted runs to the durable run queue (`lbot worker` runs them); needs databaseUrl. */
  queue?: boolean;
};

export type ServeHandle = {
  url: string;
  port: number;
  tokenFile: string | null;
  local: LocalHost;
  runs: RunGateway;
  /** Stops accepting, cancels runs in flight, stops plugins and everything else it started. Idempotent. */
  close(): Promise<void>;
};

/** Refuses a non-loopback bind without a strong token, and says that the traffic is plain HTTP. */
function checkRemoteBind(host: string, env: NodeJS.ProcessEnv, warn: (message: string) => void): void {
  if (isLoopbackHost(host)) return;
  const token = env.LBOT_API_TOKEN;
  if (!token) {
    throw new LbotError('invalid_argument', `refusing to listen on ${host} without LBOT_API_TOKEN`, {
      hint: 'set LBOT_API_TOKEN to a long random secret (e.g. `openssl rand -hex 32`), or keep the default --host 127.0.0.1',
    });
  }
  if (token.length < MIN_REMOTE_TOKEN_LENGTH) {
    throw new LbotError(
      'invalid_argument',
      `refusing to listen on ${host}: LBOT_API_TOKEN has ${token.length} characters, a non-loopback address needs at least ${MIN_REMOTE_TOKEN_LENGTH}`,
      {
        details: { host, min_length: MIN_REMOTE_TOKEN_LENGTH },
        hint: 'set LBOT_API_TOKEN to a long random secret (e.g. `openssl rand -hex 32`), or keep the default --host 127.0.0.1',
      },
    );
  }
  warn(
    `serving plain HTTP on ${host}: the bearer token, events and results cross the network unencrypted; put lbot behind a TLS-terminating reverse proxy (or a VPN) and do not expose this port directly`,
  );
}

/**
 * Beyond loopback, runner plugins run sandboxed: auto means sandbox, and serve refuses to start when the
 * sandbox cannot run here, unless plugins.isolation is none (then it says so).
 */
function checkRemoteIsolation(host: string, config: Config, dataDir: string, warn: (message: string) => void): IsolationMode {
  const remote = !isLoopbackHost(host);
  const mode = isolationModeFor(config, remote);
  if (!remote) return mode;
  if (mode === 'none') {
    warn(`serving on ${host} with plugins.isolation none: runner plugins run unisolated and can read this host's data dir, config and token`);
    return mode;
  }
  try {
    pluginSandboxFor(config, dataDir, { warn, mode }).resolve();
  } catch (err) {
    throw new LbotError('invalid_argument', `refusing to listen on ${host}: ${err instanceof Error ? err.message : String(err)}`, {
      details: { host, reason: 'sandbox_unavailable' },
      hint: 'install bubblewrap so runner plugins run sandboxed, set plugins.isolation to none to accept unisolated plugins, or keep the default --host 127.0.0.1',
    });
  }
  return mode;
}

/** The run queue of `serve --queue`: runs go to PostgreSQL for `lbot worker` processes. */
async function openQueue(opts: ServeOptions, local: LocalHost): Promise<RunGateway> {
  if (!opts.databaseUrl)
    throw new LbotError('invalid_argument', 'serve --queue needs the run stores on PostgreSQL', {
      hint: 'add --store postgres://… (or set LBOT_DATABASE_URL); lbot worker processes on the same database run the queued runs',
    });
  const { QueueDispatcher } = await import('../queue/dispatcher.js');
  return QueueDispatcher.open({
    url: opts.databaseUrl,
    runs: local.stores.runs,
    maxQueued: () => opts.configFile.config.serve.max_queued_per_conversation,
    warn: opts.warn,
  });
}

export async function startServe(opts: ServeOptions): Promise<ServeHandle> {
  const env = opts.env ?? process.env;
  const config = opts.configFile.config;
  const host = opts.host ?? config.serve.host;
  const port = opts.port ?? config.serve.port;
  checkRemoteBind(host, env, opts.warn);
  const isolation = checkRemoteIsolation(host, opts.configFile.config, opts.dataDir, opts.warn);
  const { token, file } = resolveServeToken(opts.dataDir, env);
  // One watcher on the config file; whatever reads opts.configFile.config at use (bindings on each event, the
  // models of each run, MCP servers by reconciling) follows edits made while serve runs.
  const follow = followConfig({ dataDir: opts.dataDir, configFile: opts.configFile, warn: opts.warn });
  const logger = opts.logger;
  follow.subscribe((next) => {
    const counts = { bindings: next.bindings.length, models: next.models.length, mcp_servers: next.mcp.servers.length };
    if (logger) logger.info({ event: 'config.reload', ...counts }, 'config file reloaded');
    else opts.log?.(`config reloaded: ${counts.bindings} bindings, ${counts.models} models`);
  });
  const observer = logger ? combineObservers(logObserver(logger), opts.hostHooks?.observer) : opts.hostHooks?.observer;
  let local: LocalHost;
  try {
    local = await openLocalHost({
      dataDir: opts.dataDir,
      databaseUrl: opts.databaseUrl,
      // Group commit (docs/host.md): every HTTP answer, platform send and poll offset commits first.
      commitWindowMs: config.serve.commit_window_ms,
      pluginsDir: opts.pluginsDir,
      config,
      warn: opts.warn,
      mcpMode: 'serve',
      isolation,
      // Many runs start in one turn of the event loop: their requests reach a runner in one write.
      pluginWrites: 'loop',
      follow,
      ...opts.hostHooks,
      observer,
    });
  } catch (err) {
    follow.close();
    throw err;
  }
  const closeLocal = async () => {
    follow.close();
    await local.close();
  };
  // Box sessions: clean up what a crashed serve left, then reap idle sessions on a schedule (AC-110, AC-115).
  const box = await local.box();
  if (box) {
    await box.reapExpired().catch((err: unknown) => opts.warn(`box reaping failed: ${String(err)}`));
    await box.cleanupOrphans({ engines: true }).catch((err: unknown) => opts.warn(`box orphan cleanup failed: ${String(err)}`));
  }
  const reaper = box?.startReaper();
  const delivery = startDelivery({
    store: local.stores.delivery,
    accounts: () => opts.configFile.config.platforms,
    env,
    warn: opts.warn,
    ...(opts.log ? { log: opts.log } : {}),
  });
  let runs: RunGateway;
  try {
    runs = opts.queue
      ? await openQueue(opts, local)
      : new RunManager(
          local.host,
          {
            maxConcurrent: config.serve.max_concurrent_runs,
            maxPerPlugin: config.serve.max_runs_per_plugin,
            maxQueuedPerConversation: config.serve.max_queued_per_conversation,
          },
          opts.warn,
          delivery.router,
        );
  } catch (err) {
    reaper?.close();
    await delivery.close();
    await closeLocal();
    throw err;
  }
  const admin = { dataDir: opts.dataDir, configFile: opts.configFile, box: () => local.box(), warn: opts.warn };
  const app = buildServer({
    stores: local.stores,
    runs,
    config: () => opts.configFile.config,
    token,
    env,
    admin,
    warn: opts.warn,
    logger,
    ...(opts.log ? { log: opts.log } : {}),
  });
  const pollers: Array<{ close(): Promise<void> }> = [];
  try {
    const inbound = { stores: local.stores, runs, config: () => opts.configFile.config, env, warn: opts.warn, ...(opts.log ? { log: opts.log } : {}) };
    if (opts.telegramPoll) pollers.push(...startTelegramPolling(inbound));
    if (opts.discordGateway) pollers.push(...startDiscordGateways(inbound));
  } catch (err) {
    await Promise.allSettled(pollers.map((p) => p.close()));
    reaper?.close();
    await delivery.close();
    await closeLocal();
    throw err;
  }
  const scheduler = new Scheduler({
    store: local.stores.delivery,
    schedules: () => opts.configFile.config.schedules,
    start: (e) => startEventRun({ stores: local.stores, runs, config: () => opts.configFile.config }, e),
    warn: opts.warn,
  });
  scheduler.start();
  try {
    await app.listen({ host, port });
  } catch (err) {
    await scheduler.close();
    await Promise.allSettled(pollers.map((p) => p.close()));
    reaper?.close();
    await delivery.close();
    await closeLocal();
    throw new LbotError('invalid_argument', `cannot listen on ${host}:${port}: ${err instanceof Error ? err.message : String(err)}`, {
      hint: 'pick another --port',
    });
  }
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address ? (address satisfies AddressInfo).port : port;
  let closing: Promise<void> | undefined;
  const close = async () => {
    await scheduler.close();
    await Promise.allSettled(pollers.map((p) => p.close()));
    await app.close().catch(() => undefined);
    await runs.close();
    await delivery.close();
    await Promise.allSettled((opts.onClose ?? []).map((fn) => fn()));
    reaper?.close();
    await box?.shutdown().catch((err: unknown) => opts.warn(`stopping box sessions failed: ${String(err)}`));
    await closeLocal();
  };
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`,
    port: boundPort,
    tokenFile: file,
    local,
    runs,
    close: () => (closing ??= close()),
  };
}
