// Runner manifests: capabilities, permissions, context policy, config form items, the plugin and
// component YAML, and the host-side descriptor (runner-protocol.md §2, architecture.md §4).
import { z } from 'zod';

export const I18nSchema = z.record(z.string(), z.string());
export type I18n = z.infer<typeof I18nSchema>;

/** Accepts a plain string as an en_US label (real manifests drift this way). */
const I18nLooseSchema = z.union([z.string().transform((s) => ({ en_US: s })), I18nSchema]);

export const CapabilitiesSchema = z.strictObject({
  streaming: z.boolean().default(false),
  tool_calling: z.boolean().default(false),
  knowledge_retrieval: z.boolean().default(false),
  multimodal_input: z.boolean().default(false),
  event_context: z.boolean().default(true),
  platform_api: z.boolean().default(false),
  interrupt: z.boolean().default(false),
  stateful_session: z.boolean().default(false),
  self_managed_context: z.boolean().default(true),
});
export type Capabilities = z.infer<typeof CapabilitiesSchema>;

const ops = <T extends readonly [string, ...string[]]>(values: T) => z.array(z.enum(values)).default([]);

/** The operations each permission group may grant; `platform_api` takes any action name. */
export const PERMISSION_OPERATIONS = {
  models: ['invoke', 'stream', 'rerank', 'count_tokens', 'embed'],
  tools: ['detail', 'call'],
  knowledge_bases: ['list', 'retrieve'],
  history: ['page', 'search'],
  events: ['get', 'page'],
  artifacts: ['metadata', 'read'],
  storage: ['plugin', 'workspace', 'binding'],
  files: ['config', 'knowledge'],
} as const;

export const PermissionsSchema = z.strictObject({
  models: ops(PERMISSION_OPERATIONS.models),
  tools: ops(PERMISSION_OPERATIONS.tools),
  knowledge_bases: ops(PERMISSION_OPERATIONS.knowledge_bases),
  history: ops(PERMISSION_OPERATIONS.history),
  events: ops(PERMISSION_OPERATIONS.events),
  artifacts: ops(PERMISSION_OPERATIONS.artifacts),
  storage: ops(PERMISSION_OPERATIONS.storage),
  files: ops(PERMISSION_OPERATIONS.files),
  platform_api: z.array(z.string()).default([]),
});
export type Permissions = z.infer<typeof PermissionsSchema>;
export type PermissionGroup = keyof Permissions;

export const ContextPolicySchema = z.looseObject({
  ownership: z.enum(['self_managed', 'host_bootstrap', 'hybrid']).default('self_managed'),
  bootstrap: z.enum(['none', 'current_event', 'recent_tail', 'summary_tail']).default('current_event'),
  max_inline_events: z.number().int().nonnegative().default(0),
  max_inline_bytes: z.number().int().nonnegative().default(0),
  supports_history_pull: z.boolean().default(true),
  supports_history_search: z.boolean().default(false),
  supports_artifact_pull: z.boolean().default(true),
  owns_compaction: z.boolean().default(true),
  wants_static_context_refs: z.boolean().default(true),
});
export type ContextPolicy = z.infer<typeof ContextPolicySchema>;

const ConditionSchema = z.looseObject({
  field: z.string(),
  operator: z.enum(['eq', 'neq', 'in']),
  value: z.unknown(),
});

/** One DynamicForm item of a runner's binding-config schema (§2.7); extra keys are preserved. */
export const ConfigItemSchema = z.looseObject({
  name: z.string(),
  type: z.string(),
  label: I18nLooseSchema.optional(),
  description: I18nLooseSchema.nullable().optional(),
  required: z.boolean().optional(),
  default: z.unknown().optional(),
  options: z
    .array(z.looseObject({ name: z.string(), label: I18nLooseSchema.optional() }))
    .nullable()
    .optional(),
  id: z.string().optional(),
  show_if: ConditionSchema.optional(),
  disable_if: ConditionSchema.optional(),
});
export type ConfigItem = z.infer<typeof ConfigItemSchema>;

export const SUPPORTED_PROTOCOL_VERSIONS = ['1'] as const;

/** YAML writes an empty block as null or leaves it out; both mean "all defaults". */
const nullAsEmpty = <T extends z.ZodType>(schema: T) => z.preprocess((v) => v ?? {}, schema);

/** `components/agent_runner/<name>.yaml` as authored (§2.2); unknown optional keys tolerated. */
export const ComponentManifestSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.literal('AgentRunner'),
  metadata: z.looseObject({
    name: z.string().min(1, 'metadata.name must be non-empty'),
    label: I18nLooseSchema.optional(),
    description: I18nLooseSchema.nullable().optional(),
  }),
  spec: nullAsEmpty(
    z.looseObject({
      protocol_version: z.union([z.string(), z.number().transform(String)]).default('1'),
      config: z.preprocess((v) => v ?? [], z.array(ConfigItemSchema)),
      capabilities: nullAsEmpty(CapabilitiesSchema),
      permissions: nullAsEmpty(PermissionsSchema),
      context: nullAsEmpty(ContextPolicySchema),
    }),
  ),
});
export type ComponentManifest = z.infer<typeof ComponentManifestSchema>;

/** Strips a leading `./` and trailing `/` so real-world path spellings compare equal. */
const RelPathSchema = z
  .string()
  .min(1)
  .transform((p) => p.replace(/^(\.\/)+/, '').replace(/\/+$/, ''));

export const ExecutionSchema = z.union([
  z.strictObject({ node: z.looseObject({ path: RelPathSchema }) }),
  z.strictObject({ command: z.array(z.string().min(1)).min(1) }),
  z.strictObject({ python: z.looseObject({ path: z.string(), attr: z.string().optional() }) }),
]);
export type Execution = z.infer<typeof ExecutionSchema>;

/** The plugin's `manifest.yaml` (architecture.md §4). */
export const PluginManifestSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.literal('Plugin'),
  metadata: z.looseObject({
    author: z.string().min(1),
    name: z.string().min(1),
    version: z.union([z.string(), z.number().transform(String)]).default('0.0.0'),
    label: I18nLooseSchema.optional(),
    description: I18nLooseSchema.nullable().optional(),
  }),
  spec: z.looseObject({
    /** What the plugin process may reach besides the host's proxy; nothing unless declared (docs/host.md). */
    permissions: nullAsEmpty(z.looseObject({ network: z.boolean().default(false) })),
    components: z.looseObject({
      AgentRunner: z.looseObject({ fromDirs: z.array(z.looseObject({ path: RelPathSchema })).min(1) }).optional(),
    }),
  }),
  execution: ExecutionSchema,
});
export type PluginManifest = z.infer<typeof PluginManifestSchema>;

/** The host-side view of one runner (§2.3), as `lbot runner list --json` prints it. */
export const RunnerDescriptorSchema = z.strictObject({
  id: z.string(),
  source: z.literal('plugin'),
  label: I18nSchema,
  description: I18nSchema.nullable(),
  plugin_author: z.string(),
  plugin_name: z.string(),
  runner_name: z.string(),
  plugin_version: z.string().nullable(),
  protocol_version: z.string(),
  compatible: z.boolean(),
  incompatible_reason: z.string().nullable(),
  config_schema: z.array(ConfigItemSchema),
  capabilities: CapabilitiesSchema,
  permissions: PermissionsSchema,
  context: ContextPolicySchema,
  plugin_dir: z.string(),
  /**
   * Declarations of a LangBot plugin lbot does not understand (capability keys, permission groups or
   * operations), kept as written; they grant nothing (docs/langbot-plugins.md).
   */
  unrecognized: z.strictObject({ capabilities: z.record(z.string(), z.unknown()), permissions: z.record(z.string(), z.unknown()) }).optional(),
});
export type RunnerDescriptor = z.infer<typeof RunnerDescriptorSchema>;
