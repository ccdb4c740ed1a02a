// Three-layer resource building: manifest permissions ∩ binding policy ∪ config selections (runner-protocol.md §4.4).
import type { Binding } from '../protocol/binding.js';
import type { Resources } from '../protocol/context.js';
import type { RunnerDescriptor } from '../protocol/manifest.js';
import type { ModelConfig } from '../config.js';
import type { ToolDescriptor } from './ports.js';
import { knowledgeBaseRefs, modelRefs } from './runner-config.js';
import { isSentinel } from './runner-config.js';

export type KnowledgeBaseConfig = { id: string; name?: string | null; kb_type?: string | null };

export type ResourceCatalog = {
  models: readonly ModelConfig[];
  knowledgeBases: readonly KnowledgeBaseConfig[];
  /** The run's tool table at build time (tools that exist and can be called). */
  tools: readonly ToolDescriptor[];
};

/** Whether a runner may be granted knowledge bases at all: its manifest asks for knowledge access. */
export function mayUseKnowledge(descriptor: Pick<RunnerDescriptor, 'permissions'>): boolean {
  return descriptor.permissions.knowledge_bases.length > 0;
}

/** Builds `ctx.resources`; `warn` receives one line per skipped reference. */
export function buildResources(
  descriptor: Pick<RunnerDescriptor, 'permissions' | 'capabilities' | 'config_schema'>,
  binding: Pick<Binding, 'resource_policy'>,
  config: Record<string, unknown>,
  catalog: ResourceCatalog,
  warn: (message: string) => void,
): Resources {
  const { permissions: perms, capabilities } = descriptor;
  const policy = binding.resource_policy;

  const models: Resources['models'] = [];
  // Counting tokens and embedding use the same model grants as invoking (config selectors, allowed_model_uuids).
  const allowLlm = perms.models.some((op) => op !== 'rerank');
  const allowRerank = perms.models.includes('rerank');
  if (allowLlm || allowRerank) {
    const candidates = modelRefs(descriptor.config_schema, config).filter((r) => (r.kind === 'llm' ? allowLlm : allowRerank));
    if (allowLlm) for (const id of policy.allowed_model_uuids ?? []) candidates.push({ id, kind: 'llm' });
    const seen = new Set<string>();
    for (const ref of candidates) {
      if (isSentinel(ref.id) || seen.has(ref.id)) continue;
      const model = catalog.models.find((m) => m.id === ref.id);
      if (!model) {
        warn(`model ${ref.id} is not configured; it is not granted to this run`);
        continue;
      }
      seen.add(ref.id);
      models.push({ model_id: model.id, model_type: ref.kind === 'rerank' ? 'rerank' : model.model_type, provider: model.provider });
    }
  }

  const tools: Resources['tools'] = [];
  if (perms.tools.length > 0) {
    const denied = new Set(policy.denied_tool_names);
    const seen = new Set<string>();
    for (const name of policy.allowed_tool_names ?? []) {
      if (denied.has(name) || seen.has(name)) continue;
      const tool = catalog.tools.find((t) => t.name === name);
      if (!tool) {
        warn(`tool ${name} is not available (no such tool, or its backing service is down); it is not granted`);
        continue;
      }
      seen.add(name);
      tools.push({ tool_name: name, tool_type: tool.tool_type, description: tool.description });
    }
  }

  const knowledge_bases: Resources['knowledge_bases'] = [];
  if (mayUseKnowledge(descriptor)) {
    const selected = capabilities.knowledge_retrieval ? knowledgeBaseRefs(descriptor.config_schema, config) : [];
    const seen = new Set<string>();
    for (const id of [...selected, ...(policy.allowed_kb_uuids ?? [])]) {
      if (isSentinel(id) || seen.has(id)) continue;
      seen.add(id);
      const kb = catalog.knowledgeBases.find((k) => k.id === id);
      if (!kb) {
        warn(`knowledge base ${id} does not exist; it is skipped`);
        continue;
      }
      knowledge_bases.push({ kb_id: kb.id, kb_name: kb.name ?? null, kb_type: kb.kb_type ?? null });
    }
  }

  return {
    models,
    tools,
    knowledge_bases,
    files: [],
    storage: {
      plugin_storage: perms.storage.includes('plugin') && policy.allow_plugin_storage,
      workspace_storage: perms.storage.includes('workspace') && policy.allow_workspace_storage,
    },
    platform_capabilities: {},
  };
}
