// The orchestrator `run(event, binding)` (runner-protocol.md §1.2): lookup, resources, context, session,
// facts, the plugin run with deadline and cancel, result processing, and session removal on every exit path.
import { randomUUID } from 'node:crypto';
import type { Binding } from '../protocol/binding.js';
import { bindingIdentity } from '../protocol/binding.js';
import type { EventEnvelope, JsonObject } from '../protocol/event.js';
import type { RunState } from '../protocol/context.js';
import { pluginIdentity } from '../protocol/runner-id.js';
import type { Config } from '../config.js';
import { LbotError } from '../errors.js';
import { assertSafeEnv } from '../env-policy.js';
import type { ObservedNotice, RunError, RunOwner, RunStatus, Stores } from '../stores/types.js';
import { ApiError } from './api-error.js';
import type { KnowledgeRetriever } from './api/types.js';
import { STATE_VALUE_LIMIT_BYTES } from './api/state.js';
import { registerAttachments } from './attachments.js';
import { buildRunContext } from './context-builder.js';
import { computeDeadline } from './deadline.js';
import { incomingEventRow, stateColumns } from './event-record.js';
import type { Clock, ModelProvider, PluginConnection, PluginLauncher, ProxyCall, RunnerCatalog, ToolProvider } from './ports.js';
import type { HostObserver } from './observer.js';
import { ProxyRouter } from './proxy-router.js';
import { AuditBuffer } from './audit-buffer.js';
import { buildResources, type KnowledgeBaseConfig } from './resources.js';
import { ResultProcessor, runErrorOf, type Delivered } from './result-processor.js';
import { lookupRunner } from './runner-lookup.js';
import { executeRun } from './run-execution.js';
import { normalizeRunnerConfig } from './runner-config.js';
import { authorizedIds, SessionRegistry, type RunSession } from './session.js';
import { buildScopeKeys } from './state-scope.js';

/** Crash-loop guard: at most MAX_STARTS starts of one plugin per START_WINDOW_MS. */
const MAX_STARTS = 5;
const START_WINDOW_MS = 10_000;

export type HostDeps = {
  stores: Stores;
  launcher: PluginLauncher;
  /** The runners of the plugins directory (re-read on each run, so `dev` sees edits). */
  catalog(): Promise<RunnerCatalog>;
  config: Config;
  models: ModelProvider;
  /** The tool table of one run (native, skill, MCP and plugin tools), if any. */
  tools?(req: ToolsRequest): Promise<ToolProvider | undefined>;
  knowledgeBases?: readonly KnowledgeBaseConfig[];
  retrieve?: KnowledgeRetriever;
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
  signal?: AbortSignal;
  onStarted?(run_id: string): void;
  onDelivered?(item: Delivered): void;
  onObserved?(run_id: string, notice: ObservedNotice): void;
};

export type RunOutcome = {
  run_id: string;
  runner_id: string;
  binding_id: string;
  event_id: string;
  status: Exclude<RunStatus, 'running'>;
  error: RunError | null;
  reply: string | null;
};

const notAuthorizedError = (e: ApiError) =>
  new LbotError('invalid_argument', e.message, { details: { reason: e.reason, ...e.extra }, hint: 'fix the binding config (--config) to match the runner config schema' });

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

export function createHost(deps: HostDeps): Host {
  const sessions = new SessionRegistry();
  const tables = new Map<string, ToolProvider>();
  const connections = new Map<string, Promise<PluginConnection>>();
  const startTimes = new Map<string, number[]>();
  const graceMs = deps.config.runs.cancel_grace_ms;
  const warnRun = (run_id: string, message: string) => {
    deps.warn(message);
    deps.stores.runs.addWarning(run_id, message);
  };
  // A run whose audit could not be written does not end `completed`: it fails with the store error.
  const auditFailures = new Map<string, unknown>();
  const auditFailed = (err: unknown, run_ids: readonly string[]) => {
    deps.warn(`writing the audit of proxy calls failed${run_ids.length ? ` (runs ${run_ids.join(', ')})` : ''}: ${err instanceof Error ? err.message : String(err)}`);
    for (const id of run_ids) if (!auditFailures.has(id)) auditFailures.set(id, err);
  };
  const writeNow = (run_ids: readonly string[], write: () => void) => {
    try {
      write();
    } catch (err) {
      auditFailed(err, run_ids);
      throw err;
    }
  };
  const audits = new AuditBuffer(deps.stores.runs, auditFailed);
  const router = new ProxyRouter({
    sessions,
    env: {
      stores: deps.stores,
      models: deps.models,
      toolsFor: (run_id) => tables.get(run_id),
      knowledgeBases: deps.knowledgeBases ?? [],
      retrieve: deps.retrieve ?? (async () => []),
      clock: deps.clock,
      limits: { stateValueBytes: STATE_VALUE_LIMIT_BYTES, storageValueBytes: deps.config.storage.max_value_bytes },
      warn: warnRun,
    },
    audit: (run_id, entry) => (sessions.get(run_id) ? audits.add(run_id, entry) : writeNow([], () => deps.stores.runs.addApiCall(run_id, entry))),
    auditUnattributed: (entry) => writeNow([], () => deps.stores.runs.addUnattributedCall(entry)),
    observe: (record) => deps.observer?.onProxyCall?.(record),
    runnerOf: (run_id) => deps.stores.runs.get(run_id)?.runner_id ?? null,
  });
  let closing: Promise<void> | undefined;

  /** Waits until starting `key` again keeps it within MAX_STARTS per START_WINDOW_MS (crash-loop backoff, AC-200). */
  async function startSlot(key: string): Promise<void> {
    const now = deps.clock.now();
    const recent = (startTimes.get(key) ?? []).filter((t) => now - t < START_WINDOW_MS);
    const oldest = recent[0];
    if (recent.length >= MAX_STARTS && oldest !== undefined) {
      const wait = START_WINDOW_MS - (now - oldest);
      deps.warn(`plugin ${key.split('\0')[0] ?? key} restarted ${recent.length} times in ${START_WINDOW_MS / 1000}s; backing off ${Math.ceil(wait)} ms`);
      await new Promise<void>((resolve) => deps.clock.timeout(wait).addEventListener('abort', () => resolve(), { once: true }));
      recent.shift();
    }
    recent.push(deps.clock.now());
    startTimes.set(key, recent);
  }

  /** One warm process per plugin identity and env; a dead one is replaced on next use. */
  function acquire(catalog: RunnerCatalog, identity: string, env: Record<string, string>): Promise<PluginConnection> {
    const key = `${identity}\0${JSON.stringify(env)}`;
    const existing = connections.get(key);
    if (existing) return existing;
    const plugin = catalog.plugins.get(identity);
    if (!plugin) return Promise.reject(new LbotError('runner.not_found', `plugin ${identity} not found`));
    const started = startSlot(key).then(() => deps.launcher.start({ ...plugin, env }, (call) => router.handle(call)));
    connections.set(key, started);
    started.then(
      (conn) => void conn.exited.then(() => connections.get(key) === started && connections.delete(key)),
      () => connections.delete(key),
    );
    return started;
  }



  /** Stores the raw platform payload as an artifact of the run and points the envelope's raw_ref at it. */
  function withRawRef(event: EventEnvelope, raw: unknown, run_id: string, runner_id: string): EventEnvelope {
    if (raw === undefined) return event;
    const record = deps.stores.artifacts.register({
      artifact_id: randomUUID(),
      artifact_type: 'raw_event',
      mime_type: 'application/json',
      name: `${event.source_event_type ?? event.event_type}.json`,
      size_bytes: null,
      sha256: null,
      source: 'platform',
      conversation_id: event.conversation_id,
      run_id,
      runner_id,
      bot_id: event.bot_id,
      workspace_id: event.workspace_id,
      expires_at: null,
      metadata: { raw_payload: true },
      content: Buffer.from(JSON.stringify(raw), 'utf8'),
    });
    return { ...event, raw_ref: { artifact_id: record.artifact_id, storage_key: null } };
  }

  async function run(req: RunRequest): Promise<RunOutcome> {
    const { binding } = req;
    if (closing) throw new LbotError('cancelled', 'the host is shutting down');
    if (!deps.config.plugins.enabled) {
      throw new LbotError('plugins.disabled', 'runner plugins are disabled (plugins.enabled = false)', { hint: 'unset LBOT__PLUGINS__ENABLED or set plugins.enabled to true' });
    }
    const catalog = await deps.catalog();
    const descriptor = lookupRunner(catalog, binding.runner_id, binding.bound_plugins);
    // Plugin processes run unsandboxed on the host: a binding's env never carries loader or interpreter switches.
    assertSafeEnv(binding.env, `binding ${bindingIdentity(binding)} env`);
    let config: Record<string, unknown>;
    try {
      config = normalizeRunnerConfig(descriptor.config_schema, binding.runner_config);
    } catch (err) {
      throw err instanceof ApiError ? notAuthorizedError(err) : err;
    }
    const run_id = randomUUID();
    // Start (or reuse) the plugin process now, so its start-up overlaps building the run.
    const connection = acquire(catalog, pluginIdentity(descriptor), binding.env);
    connection.catch(() => undefined); // awaited below; a start failure fails the run there
    const nowMs = deps.clock.now();
    const event = withRawRef(req.event, req.raw, run_id, descriptor.id);
    const identity = pluginIdentity(descriptor);
    // The tool table (box, MCP servers) is built only for runs that may call tools at all.
    const mayUseTools = descriptor.permissions.tools.length > 0 && (binding.resource_policy.allowed_tool_names?.length ?? 0) > 0;
    // The box session of a run's tools follows its conversation (else its actor), so files persist across runs.
    const launcher = event.conversation_id ? { launcher_type: 'conversation', launcher_id: event.conversation_id } : event.actor?.actor_id ? { launcher_type: 'actor', launcher_id: event.actor.actor_id } : null;
    const vars = launcher ? { ...launcher, conversation_id: event.conversation_id, sender_id: event.actor?.actor_id ?? null } : undefined;
    const tools = deps.tools && mayUseTools ? await deps.tools({ binding, run_id, ...(vars ? { vars } : {}) }) : undefined;
    const buildWarnings: string[] = [];
    const resources = buildResources(descriptor, binding, config, { models: deps.config.models, knowledgeBases: deps.knowledgeBases ?? [], tools: (await tools?.list()) ?? [] }, (m) => buildWarnings.push(m));
    const bindingId = bindingIdentity(binding);
    const scope_keys = buildScopeKeys(descriptor.id, bindingId, event);
    const state: RunState = { conversation: {}, actor: {}, subject: {}, runner: {} };
    if (binding.state_policy.enable_state) {
      for (const scope of binding.state_policy.state_scopes) {
        const key = scope_keys[scope];
        if (key) state[scope] = deps.stores.state.snapshot(key);
      }
      if (binding.state_policy.state_scopes.includes('conversation') && event.conversation_id && !('external.conversation_id' in state.conversation)) {
        state.conversation['external.conversation_id'] = event.conversation_id;
      }
    }
    const deadline_at = computeDeadline(config, nowMs);
    const context = buildRunContext({
      run_id,
      event,
      binding,
      descriptor,
      config,
      resources,
      state,
      latestSeq: event.conversation_id ? deps.stores.transcript.latestSeq(event.conversation_id) : null,
      deadline_at,
      nowMs,
      hostVersion: deps.version,
      adapterParams: req.adapterParams ?? null,
    });
    const extraMetadata = deps.runMetadata?.({ binding, run_id });
    if (extraMetadata) Object.assign(context.metadata, extraMetadata);
    const session: RunSession = {
      run_id,
      runner_id: descriptor.id,
      binding_id: bindingId,
      plugin_identity: identity,
      event_id: event.event_id,
      conversation_id: event.conversation_id,
      resources,
      permissions: descriptor.permissions,
      state_policy: binding.state_policy,
      scope_keys,
      state_columns: stateColumns(event, descriptor.id, bindingId),
      deadline_at,
      started_at: nowMs / 1000,
      last_activity_at: nowMs / 1000,
      authorized: authorizedIds(resources),
    };

    const outcome: RunOutcome = { run_id, runner_id: descriptor.id, binding_id: bindingId, event_id: event.event_id, status: 'failed', error: null, reply: null };
    let stderrTail: string | null = null;
    deps.stores.runs.create({ run_id, runner_id: descriptor.id, binding_id: bindingId, event_id: event.event_id, conversation_id: event.conversation_id, started_at: nowMs / 1000, ...(deps.owner ? { owner: deps.owner } : {}) });
    for (const w of buildWarnings) warnRun(run_id, w);
    if (tools) tables.set(run_id, tools);
    sessions.register(session);
    try {
      req.onStarted?.(run_id);
      deps.observer?.onRunStarted?.({ run_id, runner_id: descriptor.id, event_id: event.event_id, event_type: event.event_type });
      deps.stores.events.append(incomingEventRow(event, run_id, descriptor.id));
      registerAttachments(deps.stores.artifacts, event, { run_id, runner_id: descriptor.id }, (m) => warnRun(run_id, m));
      if (event.event_type === 'message.received' && event.conversation_id) {
        deps.stores.transcript.append({
          event_id: event.event_id,
          conversation_id: event.conversation_id,
          thread_id: event.thread_id,
          role: 'user',
          item_type: 'message',
          content: event.input.text,
          content_json: { role: 'user', content: event.input.contents },
          artifact_refs: event.input.attachments,
          run_id: null,
          runner_id: null,
          metadata: { actor_type: event.actor?.actor_type ?? null, actor_id: event.actor?.actor_id ?? null },
        });
      }
      const processor = new ResultProcessor({
        session,
        event,
        binding,
        stores: deps.stores,
        streaming: context.delivery.supports_streaming,
        nowS: () => deps.clock.now() / 1000,
        stateValueBytes: STATE_VALUE_LIMIT_BYTES,
        deliver: (item) => {
          deps.stores.runs.addResult(run_id, { ...item });
          req.onDelivered?.(item);
          deps.observer?.onDelivered?.(item);
        },
        observe: (notice) => {
          deps.stores.runs.addObserved(run_id, notice);
          req.onObserved?.(run_id, notice);
          deps.observer?.onObserved?.(run_id, notice);
        },
        warn: (m) => warnRun(run_id, m),
      });
      const conn = await connection;
      const ended = await executeRun({ clock: deps.clock, sessions, graceMs, warnRun }, conn, session, req, processor, context);
      outcome.status = ended.status;
      outcome.error = ended.error;
      outcome.reply = processor.reply;
      if (ended.error && ['runner.crashed', 'runner.protocol_error'].includes(ended.error.code)) stderrTail = conn.stderrTail() || null;
    } catch (err) {
      const e = runErrorOf(err);
      outcome.status = e.code === 'cancelled' ? 'cancelled' : 'failed';
      outcome.error = e;
    } finally {
      sessions.unregister(run_id);
      tables.delete(run_id);
      audits.flush();
      const auditErr = auditFailures.get(run_id);
      auditFailures.delete(run_id);
      if (auditErr !== undefined && outcome.status === 'completed') {
        outcome.status = 'failed';
        outcome.error = runErrorOf(auditErr);
      }
      deps.stores.runs.finish(run_id, outcome.status, outcome.error, deps.clock.now() / 1000, stderrTail);
      deps.observer?.onRunEnded?.(outcome);
    }
    return outcome;
  }

  /** Closes a replaced connection once it has no runs in flight. */
  async function drainAndClose(conn: PluginConnection): Promise<void> {
    while (conn.activeRuns().length > 0) {
      const exited = conn.exited.then(() => true);
      const tick = new Promise<boolean>((resolve) => deps.clock.timeout(50).addEventListener('abort', () => resolve(false), { once: true }));
      if (await Promise.race([exited, tick])) return;
    }
    await conn.close();
  }

  async function reload(identity: string, given?: RunnerCatalog): Promise<void> {
    const catalog = given ?? (await deps.catalog());
    const plugin = catalog.plugins.get(identity);
    if (!plugin) throw new LbotError('runner.not_found', `plugin ${identity} not found after reload`);
    const keys = [...connections.keys()].filter((key) => key.startsWith(`${identity}\0`));
    if (keys.length === 0) keys.push(`${identity}\0${JSON.stringify({})}`);
    for (const key of keys) {
      const current = connections.get(key);
      const env: unknown = JSON.parse(key.slice(identity.length + 1));
      const envRecord: Record<string, string> = {};
      if (env && typeof env === 'object') for (const [k, v] of Object.entries(env)) if (typeof v === 'string') envRecord[k] = v;
      const fresh = deps.launcher.start({ ...plugin, env: envRecord }, (call) => router.handle(call));
      await fresh; // throws: the old process keeps serving
      connections.set(key, fresh);
      void fresh.then((conn) => void conn.exited.then(() => connections.get(key) === fresh && connections.delete(key)));
      void current?.then(drainAndClose, () => undefined).catch((err: unknown) => deps.warn(`stopping the old ${identity} process failed: ${String(err)}`));
    }
  }

  async function close(): Promise<void> {
    const all = [...connections.values()];
    connections.clear();
    await Promise.allSettled(all.map(async (p) => (await p).close()));
    audits.flush();
  }

  return {
    run,
    reload,
    sessions,
    handle: (call) => router.handle(call),
    close: () => (closing ??= close()),
  };
}
