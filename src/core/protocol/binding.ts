// `AgentBinding`: which runner handles which events, with what config and policies (runner-protocol.md §3.3).
import { z } from 'zod';
import { JsonObjectSchema } from './event.js';

export const STATE_SCOPES = ['conversation', 'actor', 'subject', 'runner'] as const;
export const StateScopeSchema = z.enum(STATE_SCOPES);
export type StateScope = z.infer<typeof StateScopeSchema>;

export const BindingScopeSchema = z.strictObject({
  scope_type: z.enum(['bot', 'pipeline', 'workspace', 'global']).default('pipeline'),
  scope_id: z.string().nullable().default(null),
});
export type BindingScope = z.infer<typeof BindingScopeSchema>;

export const ResourcePolicySchema = z.strictObject({
  allowed_model_uuids: z.array(z.string()).nullable().default(null),
  allowed_tool_names: z.array(z.string()).nullable().default(null),
  denied_tool_names: z.array(z.string()).default([]),
  allowed_kb_uuids: z.array(z.string()).nullable().default(null),
  allow_plugin_storage: z.boolean().default(true),
  allow_workspace_storage: z.boolean().default(false),
});
export type ResourcePolicy = z.infer<typeof ResourcePolicySchema>;

export const StatePolicySchema = z.strictObject({
  enable_state: z.boolean().default(true),
  state_scopes: z.array(StateScopeSchema).default(['conversation', 'actor']),
});
export type StatePolicy = z.infer<typeof StatePolicySchema>;

export const DeliveryPolicySchema = z.strictObject({
  enable_streaming: z.boolean().default(true),
  enable_reply: z.boolean().default(true),
  max_message_size: z.number().int().positive().nullable().default(null),
});
export type DeliveryPolicy = z.infer<typeof DeliveryPolicySchema>;

export const EventFilterSchema = z.strictObject({
  field: z.enum([
    'event_type',
    'source',
    'bot_id',
    'conversation_id',
    'thread_id',
    'actor.actor_type',
    'actor.actor_id',
    'subject.subject_type',
    'subject.subject_id',
    'source_event_type',
  ]),
  operator: z.enum(['eq', 'neq', 'in', 'prefix']),
  value: z.unknown(),
});
export type EventFilter = z.infer<typeof EventFilterSchema>;

/**
 * What `lbot serve` does with a new event while a run of the same (binding, conversation) is going
 * (docs/run-policy.md): wait its turn, cancel the running one, refuse the event, or run beside it.
 */
export const RUN_POLICIES = ['enqueue', 'interrupt', 'reject', 'parallel'] as const;
export const RunPolicySchema = z.enum(RUN_POLICIES);
export type RunPolicy = z.infer<typeof RunPolicySchema>;

const NonSecretEnvSchema = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'env names must be shell identifiers'), z.string());

export const BindingSchema = z.strictObject({
  binding_id: z.string().min(1),
  scope: BindingScopeSchema.prefault({}),
  event_types: z.array(z.string().min(1)).default(['message.received']),
  runner_id: z.string().min(1),
  runner_config: JsonObjectSchema.default({}),
  resource_policy: ResourcePolicySchema.prefault({}),
  state_policy: StatePolicySchema.prefault({}),
  delivery_policy: DeliveryPolicySchema.prefault({}),
  enabled: z.boolean().default(true),
  pipeline_uuid: z.string().nullable().default(null),
  filters: z.array(EventFilterSchema).default([]),
  priority: z.number().default(0),
  bound_plugins: z.array(z.string()).nullable().default(null),
  skills: z.array(z.string()).default([]),
  env: NonSecretEnvSchema.default({}),
  run_policy: RunPolicySchema.default('enqueue'),
  /** false: the plugin's processes for this binding get no network even when its manifest declares it. */
  network: z.boolean().optional(),
});
export type Binding = z.infer<typeof BindingSchema>;
export type BindingInput = z.input<typeof BindingSchema>;

/** The identity used in state keys: binding_id, else scope_type:scope_id, else unknown_binding (§3.3). */
export function bindingIdentity(binding: Pick<Binding, 'binding_id' | 'scope'>): string {
  if (binding.binding_id) return binding.binding_id;
  if (binding.scope.scope_id) return `${binding.scope.scope_type}:${binding.scope.scope_id}`;
  return 'unknown_binding';
}

/** The default binding `cli:<runner_id>` that `lbot run --runner` uses (acceptance §0.5). */
export function defaultCliBinding(runnerId: string, runnerConfig: Record<string, unknown> = {}): Binding {
  return BindingSchema.parse({
    binding_id: `cli:${runnerId}`,
    scope: { scope_type: 'global', scope_id: null },
    event_types: ['*'],
    runner_id: runnerId,
    runner_config: runnerConfig,
  });
}
