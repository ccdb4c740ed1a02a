// The orchestrator `run(event, binding)` (runner-protocol.md §1.2): the runner, a leased plugin process,
// the run's setup, its record, the plugin run with deadline and cancel, and the end recorded on every path.
// Plugin processes live in the pool (plugin-pool.ts), run setup in run-setup.ts.
import { LbotError } from '../errors.js';
import type { EventEnvelope } from '../protocol/event.js';
import { proxyMethods } from '../protocol/proxy.js';
import { deliveredLine } from '../protocol/result-line.js';
import type { AsyncStores } from '../stores/async.js';
import { STATE_VALUE_LIMIT_BYTES } from './api/state.js';
import { registerAttachments } from './attachments.js';
import { AuditBuffer } from './audit-buffer.js';
import { ModelContexts } from './model-contexts.js';
import { incomingEventRow } from './event-record.js';
import type { Host, HostDeps, RunOutcome, RunRequest } from './host-types.js';
import { PluginPool } from './plugin-pool.js';
import type { KnowledgePort, PluginConnection, RunnerCatalog, ToolProvider } from './ports.js';
import { ProxyRouter } from './proxy-router.js';
import { ResultProcessor, runErrorOf } from './result-processor.js';
import { executeRun } from './run-execution.js';
import { prepareRun, runTarget, type PreparedRun } from './run-setup.js';
import { SessionRegistry } from './session.js';

/** A host built without knowledge bases: nothing to list, and every base is unknown. */
const NO_KNOWLEDGE: KnowledgePort = {
  list: () => Promise.resolve([]),
  retrieve: (kb_id) => Promise.reject(new LbotError('kb.not_found', `knowledge base ${kb_id} not found`)),
};

export type { Host, HostDeps, RunOutcome, RunRequest, ToolsRequest } from './host-types.js';

/** The incoming event in the event log, its attachments as artifacts, and a user message in the transcript. */
async function recordIncoming(stores: AsyncStores, event: EventEnvelope, run: { run_id: string; runner_id: string }, warn: (m: string) => void): Promise<void> {
  await stores.events.append(incomingEventRow(event, run.run_id, run.runner_id));
  await registerAttachments(stores.artifacts, event, run, warn);
  if (event.event_type !== 'message.received' || !event.conversation_id) return;
  await stores.transcript.append({
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

// Over 100 lines because it is one closure: the run, its audit plumbing and the router share the session
// registry and the per-run tool tables; the parts with logic of their own are modules (see the header).
export function createHost(deps: HostDeps): Host {
  const sessions = new SessionRegistry();
  const tables = new Map<string, ToolProvider>();
  const processors = new Map<string, ResultProcessor>();
  const graceMs = deps.config.runs.cancel_grace_ms;
  const warnRun = (run_id: string, message: string) => {
    deps.warn(message);
    // A warning is best effort: a store that fails here fails the run's other writes too.
    deps.stores.runs.addWarning(run_id, message).catch((err: unknown) => deps.warn(`recording a warning of run ${run_id} failed: ${String(err)}`));
  };
  // A run whose audit could not be written does not end `completed`: it fails with the store error.
  const auditFailures = new Map<string, unknown>();
  const auditFailed = (err: unknown, run_ids: readonly string[]) => {
    deps.warn(
      `writing the audit of proxy calls failed${run_ids.length ? ` (runs ${run_ids.join(', ')})` : ''}: ${err instanceof Error ? err.message : String(err)}`,
    );
    for (const id of run_ids) if (!auditFailures.has(id)) auditFailures.set(id, err);
  };
  const writeNow = async (run_ids: readonly string[], write: () => Promise<void>) => {
    try {
      await write();
    } catch (err) {
      auditFailed(err, run_ids);
      throw err;
    }
  };
  const audits = new AuditBuffer(deps.stores.runs, auditFailed);
  const contexts = new ModelContexts();
  const router = new ProxyRouter({
    sessions,
    env: {
      stores: deps.stores,
      models: deps.models,
      contexts,
      toolsFor: (run_id) => tables.get(run_id),
      knowledge: deps.knowledge ?? NO_KNOWLEDGE,
      clock: deps.clock,
      limits: { stateValueBytes: STATE_VALUE_LIMIT_BYTES, storageValueBytes: deps.config.storage.max_value_bytes },
      warn: warnRun,
    },
    audit: (run_id, entry, now) => {
      const written = sessions.get(run_id) ? audits.add(run_id, entry, now) : writeNow([], () => deps.stores.runs.addApiCall(run_id, entry));
      // A refusal is answered once its row is durable, also when a commit window holds writes back (serve).
      return now ? written.then(() => deps.stores.commit()) : written;
    },
    auditUnattributed: (entry) => writeNow([], () => deps.stores.runs.addUnattributedCall(entry)).then(() => deps.stores.commit()),
    // A call that may read the stores sees the notices its run sent before it; model calls need not wait.
    beforeCall: async (run_id, method) => {
      if (proxyMethods[method].resource !== 'model') await processors.get(run_id)?.flush();
    },
    observe: (record) => deps.observer?.onProxyCall?.(record),
    runnerOf: async (run_id) => (await deps.stores.runs.get(run_id))?.runner_id ?? null,
  });
  const pool = new PluginPool({
    launcher: deps.launcher,
    clock: deps.clock,
    warn: deps.warn,
    onApiCall: (call) => router.handle(call),
    restartLimit: deps.config.plugins.restart_limit,
    onProcess: (event) => deps.observer?.onPluginProcess?.(event),
  });
  let closing: Promise<void> | undefined;

  /** Records the prepared run, sends it to the plugin, and records how it ended (on every path). */
  async function execute(req: RunRequest, run: PreparedRun, connection: Promise<PluginConnection>): Promise<RunOutcome> {
    const { run_id, event, session, context } = run;
    const runner_id = run.target.descriptor.id;
    const outcome: RunOutcome = { run_id, runner_id, binding_id: session.binding_id, event_id: event.event_id, status: 'failed', error: null, reply: null };
    let stderrTail: string | null = null;
    await deps.stores.runs.create({
      run_id,
      runner_id,
      binding_id: session.binding_id,
      event_id: event.event_id,
      conversation_id: event.conversation_id,
      started_at: session.started_at,
      ...(deps.owner ? { owner: deps.owner } : {}),
    });
    for (const w of run.warnings) warnRun(run_id, w);
    if (run.tools) tables.set(run_id, run.tools);
    sessions.register(session);
    contexts.open(run_id);
    try {
      req.onStarted?.(run_id);
      deps.observer?.onRunStarted?.({ run_id, runner_id, event_id: event.event_id, event_type: event.event_type });
      await recordIncoming(deps.stores, event, { run_id, runner_id }, (m) => warnRun(run_id, m));
      const processor = new ResultProcessor({
        session,
        event,
        binding: req.binding,
        stores: deps.stores,
        streaming: context.delivery.supports_streaming,
        nowS: () => deps.clock.now() / 1000,
        stateValueBytes: STATE_VALUE_LIMIT_BYTES,
        deliver: async (item) => {
          await deps.stores.runs.addResult(run_id, deliveredLine(item));
          req.onDelivered?.(item);
          deps.observer?.onDelivered?.(item);
        },
        observe: async (notice) => {
          await deps.stores.runs.addObserved(run_id, notice);
          req.onObserved?.(run_id, notice);
          deps.observer?.onObserved?.(run_id, notice);
        },
        warn: (m) => warnRun(run_id, m),
      });
      processors.set(run_id, processor);
      // While the plugin process starts (or takes the run), the run's models get ready for its first call.
      if (session.resources.models.length > 0) deps.models.prepare?.(session.resources.models.map((m) => m.model_id));
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
      contexts.drop(run_id);
      tables.delete(run_id);
      processors.delete(run_id);
      await audits.flush();
      const auditErr = auditFailures.get(run_id);
      auditFailures.delete(run_id);
      if (auditErr !== undefined && outcome.status === 'completed') {
        outcome.status = 'failed';
        outcome.error = runErrorOf(auditErr);
      }
      await deps.stores.runs.finish(run_id, outcome.status, outcome.error, deps.clock.now() / 1000, stderrTail);
      deps.observer?.onRunEnded?.(outcome);
    }
    return outcome;
  }

  async function run(req: RunRequest): Promise<RunOutcome> {
    if (closing) throw new LbotError('cancelled', 'the host is shutting down');
    if (!deps.config.plugins.enabled) {
      throw new LbotError('plugins.disabled', 'runner plugins are disabled (plugins.enabled = false)', {
        hint: 'unset LBOT__PLUGINS__ENABLED or set plugins.enabled to true',
      });
    }
    const catalog = await deps.catalog();
    const target = runTarget(catalog, req.binding);
    // Start (or reuse) the plugin process now, so its start-up overlaps setting up the run.
    const lease = pool.acquire(catalog, target.identity, req.binding);
    lease.connection.catch(() => undefined); // awaited in execute; a start failure fails the run there
    try {
      return await execute(req, await prepareRun(deps, req, target), lease.connection);
    } finally {
      lease.release();
    }
  }

  async function reload(identity: string, given?: RunnerCatalog): Promise<void> {
    const catalog = given ?? (await deps.catalog());
    const plugin = catalog.plugins.get(identity);
    if (!plugin) throw new LbotError('runner.not_found', `plugin ${identity} not found after reload`);
    await pool.reload(identity, plugin);
  }

  return {
    run,
    reload,
    sessions,
    handle: (call) => router.handle(call),
    close: () => (closing ??= pool.close().then(() => audits.flush())),
  };
}
