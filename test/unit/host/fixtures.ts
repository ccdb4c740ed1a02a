// Builders for the host unit tests: descriptors, bindings and envelopes parsed through the real schemas.
import { ModelConfigSchema, type ModelConfig } from '../../../src/core/config.js';
import { BindingSchema, type Binding, type BindingInput } from '../../../src/core/protocol/binding.js';
import { EventEnvelopeSchema, type EventEnvelope, type EventEnvelopeInput } from '../../../src/core/protocol/event.js';
import { CapabilitiesSchema, ConfigItemSchema, ContextPolicySchema, PermissionsSchema, type RunnerDescriptor } from '../../../src/core/protocol/manifest.js';
import type { PluginConnection } from '../../../src/core/host/ports.js';

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
