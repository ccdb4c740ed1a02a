// Setting up one run before its plugin is asked (runner-protocol.md §1.2 steps 1–6): the runner and its
// checked config, the raw payload as an artifact, the tool table, resources, state, context and session.
import { randomUUID } from 'node:crypto';
import type { Binding } from '../protocol/binding.js';
import { bindingIdentity } from '../protocol/binding.js';
import type { RunContext, RunState } from '../protocol/context.js';
import type { EventEnvelope } from '../protocol/event.js';
import type { RunnerDescriptor } from '../protocol/manifest.js';
import { pluginIdentity } from '../protocol/runner-id.js';
import { LbotError } from '../errors.js';
import { assertSafeEnv } from '../env-policy.js';
import type { AsyncStores } from '../stores/async.js';
import { ApiError } from './api-error.js';
import { buildRunContext } from './context-builder.js';
import { computeDeadline } from './deadline.js';
import { stateColumns } from './event-record.js';
import type { HostDeps, RunRequest } from './host-types.js';
import type { RunnerCatalog, ToolProvider } from './ports.js';
import { buildResources, mayUseKnowledge, type KnowledgeBaseConfig } from './resources.js';
import { lookupRunner } from './runner-lookup.js';
import { normalizeRunnerConfig } from './runner-config.js';
import { authorizedIds, type RunSession } from './session.js';
import { buildScopeKeys, type ScopeKeys } from './state-scope.js';
import { timeOrderedId } from '../time-ordered-id.js';

/** The runner a binding names and the config it receives; throws the coded pre-run errors. */
export type RunTarget = { descriptor: RunnerDescriptor; identity: string; config: Record<string, unknown> };

export function runTarget(catalog: RunnerCatalog, binding: Binding): RunTarget {
  const descriptor = lookupRunner(catalog, binding.runner_id, binding.bound_plugins);
  // Plugin processes may run unisolated (plugins.isolation): a binding's env never carries loader or interpreter switches.
  assertSafeEnv(binding.env, `binding ${bindingIdentity(binding)} env`);
  try {
    return { descriptor, identity: pluginIdentity(descriptor), config: normalizeRunnerConfig(descriptor.config_schema, binding.runner_config) };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    throw new LbotError('invalid_argument', err.message, {
      details: { reason: err.reason, ...err.extra },
      hint: 'fix the binding config (--config) to match the runner config schema',
    });
  }
}

export type SetupDeps = Pick<HostDeps, 'stores' | 'config' | 'tools' | 'knowledge' | 'clock' | 'version' | 'runMetadata'>;

/** Everything the run needs before it is recorded and sent to the plugin. */
export type PreparedRun = {
  run_id: string;
  target: RunTarget;
  event: EventEnvelope;
  context: RunContext;
  session: RunSession;
  tools: ToolProvider | undefined;
  /** Resource warnings, recorded on the run once it exists. */
  warnings: string[];
};

/** Stores the raw platform payload as an artifact of the run and points the envelope's raw_ref at it. */
async function withRawRef(stores: AsyncStores, event: EventEnvelope, raw: unknown, run_id: string, runner_id: string): Promise<EventEnvelope> {
  if (raw === undefined) return event;
  const record = await stores.artifacts.register({
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

/** The tool table, built only for runs that may call tools at all; its box session follows the conversation (else the actor). */
async function toolTable(
  deps: SetupDeps,
  binding: Binding,
  descriptor: RunnerDescriptor,
  event: EventEnvelope,
  run_id: string,
): Promise<ToolProvider | undefined> {
  const mayUseTools = descriptor.permissions.tools.length > 0 && (binding.resource_policy.allowed_tool_names?.length ?? 0) > 0;
  if (!deps.tools || !mayUseTools) return undefined;
  const launcher = event.conversation_id
    ? { launcher_type: 'conversation', launcher_id: event.conversation_id }
    : event.actor?.actor_id
      ? { launcher_type: 'actor', launcher_id: event.actor.actor_id }
      : null;
  const vars = launcher ? { ...launcher, conversation_id: event.conversation_id, sender_id: event.actor?.actor_id ?? null } : undefined;
  return deps.tools({ binding, run_id, ...(vars ? { vars } : {}) });
}

/** The knowledge bases a runner may be granted: none to list when buildResources would grant it none. */
async function knowledgeCatalog(deps: SetupDeps, descriptor: RunnerDescriptor): Promise<KnowledgeBaseConfig[]> {
  if (!deps.knowledge || !mayUseKnowledge(descriptor)) return [];
  return (await deps.knowledge.list()).map((k) => ({ id: k.kb_id, name: k.kb_name, kb_type: k.kb_type }));
}

/** The state snapshots the binding's policy lets the runner see. */
async function stateSnapshot(stores: AsyncStores, binding: Binding, event: EventEnvelope, scope_keys: ScopeKeys): Promise<RunState> {
  const state: RunState = { conversation: {}, actor: {}, subject: {}, runner: {} };
  if (!binding.state_policy.enable_state) return state;
  for (const scope of binding.state_policy.state_scopes) {
    const key = scope_keys[scope];
    if (key) state[scope] = await stores.state.snapshot(key);
  }
  if (binding.state_policy.state_scopes.includes('conversation') && event.conversation_id && !('external.conversation_id' in state.conversation)) {
    state.conversation['external.conversation_id'] = event.conversation_id;
  }
  return state;
}

export async function prepareRun(deps: SetupDeps, req: RunRequest, target: RunTarget): Promise<PreparedRun> {
  const { binding } = req;
  const { descriptor, config } = target;
  const run_id = req.run_id ?? timeOrderedId();
  const nowMs = deps.clock.now();
  const event = await withRawRef(deps.stores, req.event, req.raw, run_id, descriptor.id);
  const tools = await toolTable(deps, binding, descriptor, event, run_id);
  const warnings: string[] = [];
  const resources = buildResources(
    descriptor,
    binding,
    config,
    {
      models: deps.config.models,
      knowledgeBases: await knowledgeCatalog(deps, descriptor),
      tools: (await tools?.list()) ?? [],
    },
    (m) => warnings.push(m),
  );
  const bindingId = bindingIdentity(binding);
  const scope_keys = buildScopeKeys(descriptor.id, bindingId, event);
  const deadline_at = computeDeadline(config, nowMs);
  const [state, latestSeq] = await Promise.all([
    stateSnapshot(deps.stores, binding, event, scope_keys),
    event.conversation_id ? deps.stores.transcript.latestSeq(event.conversation_id) : null,
  ]);
  const context = buildRunContext({
    run_id,
    event,
    binding,
    descriptor,
    config,
    resources,
    state,
    latestSeq,
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
    plugin_identity: target.identity,
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
  return { run_id, target, event, context, session, tools, warnings };
}
