// Builders for the host unit tests: descriptors, bindings and envelopes parsed through the real schemas.
import { ModelConfigSchema, type ModelConfig } from '../../../src/core/config.js';
import { BindingSchema, type Binding, type BindingInput } from '../../../src/core/protocol/binding.js';
import { EventEnvelopeSchema, type EventEnvelope, type EventEnvelopeInput } from '../../../src/core/protocol/event.js';
import { CapabilitiesSchema, ConfigItemSchema, ContextPolicySchema, PermissionsSchema, type RunnerDescriptor } from '../../../src/core/protocol/manifest.js';
import type { PluginConnection, RunnerCatalog } from '../../../src/core/host/ports.js';
import { buildResources } from '../../../src/core/host/resources.js';
import { authorizedIds, type RunSession } from '../../../src/core/host/session.js';
import { buildScopeKeys } from '../../../src/core/host/state-scope.js';

export const RUNNER_ID = 'plugin:acme/scripted/default';

export function descriptor(
  spec: { permissions?: Record<string, unknown>; capabilities?: Record<string, unknown>; config?: unknown[]; protocol_version?: string } = {},
): RunnerDescriptor {
  return {
    id: RUNNER_ID,
    source: 'plugin',
    label: { en_US: 'Scripted' },
    description: null,
    plugin_author: 'acme',
    plugin_name: 'scripted',
    runner_name: 'default',
    plugin_version: '0.1.0',
    protocol_version: spec.protocol_version ?? '1',
    compatible: true,
    incompatible_reason: null,
    config_schema: (spec.config ?? []).map((i) => ConfigItemSchema.parse(i)),
    capabilities: CapabilitiesSchema.parse(spec.capabilities ?? {}),
    permissions: PermissionsSchema.parse(spec.permissions ?? {}),
    context: ContextPolicySchema.parse({}),
    plugin_dir: '/plugins/scripted',
  };
}

export function binding(overrides: Partial<BindingInput> = {}): Binding {
  return BindingSchema.parse({ binding_id: 'b1', runner_id: RUNNER_ID, ...overrides });
}

export function envelope(overrides: Partial<EventEnvelopeInput> = {}): EventEnvelope {
  return EventEnvelopeSchema.parse({
    event_id: 'ev-1',
    event_type: 'message.received',
    source: 'api',
    conversation_id: 'c1',
    actor: { actor_type: 'user', actor_id: 'u1', actor_name: 'Ann' },
    subject: { subject_type: 'message', subject_id: 'm1' },
    input: { text: 'ping', contents: [{ type: 'text', text: 'ping' }], attachments: [] },
    delivery: { surface: 'cli', supports_streaming: true },
    ...overrides,
  });
}

export const models: ModelConfig[] = [
  ModelConfigSchema.parse({ id: 'm-fake', provider: 'fake', reply: 'FAKE_PONG', api_key: 'sk-test-SECRET123' }),
  ModelConfigSchema.parse({ id: 'm-other', provider: 'fake', reply: 'OTHER' }),
  ModelConfigSchema.parse({ id: 'm-rerank', provider: 'fake', model_type: 'rerank' }),
];

/** The session of a live run of `d` under `b` for `event`, its resources built from `models` as the host builds them. */
export function runSession(
  run_id: string,
  d: RunnerDescriptor,
  b: Binding,
  event: EventEnvelope,
  opts: { plugin_identity: string; deadline_at?: number | null; startedAt?: number },
): RunSession {
  const resources = buildResources(d, b, {}, { models, knowledgeBases: [], tools: [] }, () => {});
  const started = opts.startedAt ?? Date.now() / 1000;
  return {
    run_id,
    runner_id: d.id,
    binding_id: b.binding_id,
    plugin_identity: opts.plugin_identity,
    event_id: event.event_id,
    conversation_id: event.conversation_id,
    resources,
    permissions: d.permissions,
    state_policy: b.state_policy,
    scope_keys: buildScopeKeys(d.id, b.binding_id, event),
    state_columns: {
      runner_id: d.id,
      binding_identity: b.binding_id,
      bot_id: null,
      workspace_id: null,
      conversation_id: event.conversation_id,
      thread_id: null,
      actor_type: 'user',
      actor_id: 'u1',
      subject_type: null,
      subject_id: null,
    },
    deadline_at: opts.deadline_at ?? null,
    started_at: started,
    last_activity_at: started,
    authorized: authorizedIds(resources),
  };
}

/** A plugin connection of acme/scripted whose runs do what `run` does; the rest idles. */
export function scriptedConnection(run: PluginConnection['run']): PluginConnection {
  return {
    identity: 'acme/scripted',
    pgid: null,
    run,
    cancel: () => undefined,
    activeRuns: () => [],
    stderrTail: () => '',
    accepting: true,
    close: async () => undefined,
    kill: async () => undefined,
    exited: new Promise(() => undefined),
  };
}

/** The catalog of acme/scripted with the one runner `d`. */
export function scriptedCatalog(d: RunnerDescriptor): RunnerCatalog {
  return {
    runners: [d],
    plugins: new Map([['acme/scripted', { identity: 'acme/scripted', dir: d.plugin_dir, execution: { node: { path: 'main.js' } } }]]),
    warnings: [],
  };
}
