// Three-layer resource building (runner-protocol.md §4.4): manifest ∩ binding policy ∪ config selections.
import { describe, expect, it } from 'vitest';
import { buildResources, type ResourceCatalog } from '../../../src/core/host/resources.js';
import { authorizedIds, isResourceAllowed, SessionRegistry, type RunSession } from '../../../src/core/host/session.js';
import { normalizeRunnerConfig } from '../../../src/core/host/runner-config.js';
import { binding, descriptor, models } from './fixtures.js';

const catalog: ResourceCatalog = {
  models,
  knowledgeBases: [{ id: 'kb1', name: 'Docs', kb_type: 'vector' }],
  tools: [
    { name: 'echo', tool_type: 'mcp', description: 'echoes', parameters: {} },
    { name: 'exec', tool_type: 'native', description: 'runs commands', parameters: {} },
  ],
};

function build(d: ReturnType<typeof descriptor>, b = binding(), config: Record<string, unknown> = {}) {
  const warnings: string[] = [];
  const resources = buildResources(d, b, normalizeRunnerConfig(d.config_schema, config), catalog, (m) => warnings.push(m));
  return { resources, warnings };
}

describe('buildResources', () => {
  const selector = [{ name: 'model', type: 'llm-model-selector' }];

  it('grants a config-selected model only with an LLM permission (AC-020)', () => {
    expect(build(descriptor({ permissions: { models: ['invoke'] }, config: selector }), binding(), { model: 'm-fake' }).resources.models).toEqual([
      { model_id: 'm-fake', model_type: 'llm', provider: 'fake' },
    ]);
    expect(build(descriptor({ permissions: { models: ['stream'] }, config: selector }), binding(), { model: 'm-fake' }).resources.models).toHaveLength(1);
    expect(build(descriptor({ permissions: { models: [] }, config: selector }), binding(), { model: 'm-fake' }).resources.models).toEqual([]);
    expect(build(descriptor({ permissions: { models: ['rerank'] }, config: selector }), binding(), { model: 'm-fake' }).resources.models).toEqual([]);
  });

  it('lets a schema default authorize a model (lbot rule §2.8 step 5)', () => {
    const d = descriptor({ permissions: { models: ['invoke'] }, config: [{ name: 'model', type: 'llm-model-selector', default: 'm-other' }] });
    expect(build(d).resources.models.map((m) => m.model_id)).toEqual(['m-other']);
  });

  it('grants fallbacks once each, skips sentinels and rerank without the permission (AC-022)', () => {
    const d = descriptor({
      permissions: { models: ['invoke'] },
      config: [
        { name: 'model', type: 'model-fallback-selector' },
        { name: 'rerank', type: 'rerank-model-selector' },
      ],
    });
    const { resources } = build(d, binding(), { model: { primary: 'm-fake', fallbacks: ['m-other', '__none__', 'm-fake'] }, rerank: 'm-rerank' });
    expect(resources.models.map((m) => m.model_id)).toEqual(['m-fake', 'm-other']);
  });

  it('grants a rerank model as model_type rerank with the rerank permission', () => {
    const d = descriptor({ permissions: { models: ['rerank'] }, config: [{ name: 'rerank', type: 'rerank-model-selector' }] });
    expect(build(d, binding(), { rerank: 'm-rerank' }).resources.models).toEqual([{ model_id: 'm-rerank', model_type: 'rerank', provider: 'fake' }]);
  });

  it('adds binding-level model grants only with an LLM permission (AC-022 variant)', () => {
    const b = binding({ resource_policy: { allowed_model_uuids: ['m-other'] } });
    expect(build(descriptor({ permissions: { models: ['invoke'] } }), b).resources.models.map((m) => m.model_id)).toEqual(['m-other']);
    expect(build(descriptor({ permissions: { models: ['rerank'] } }), b).resources.models).toEqual([]);
  });

  it('skips unknown models with a warning', () => {
    const { resources, warnings } = build(descriptor({ permissions: { models: ['invoke'] }, config: selector }), binding(), { model: 'm-ghost' });
    expect(resources.models).toEqual([]);
    expect(warnings.join('\n')).toContain('m-ghost');
  });

  it('keeps only allowed, existing tools; deny beats allow (AC-217, AC-218)', () => {
    const d = descriptor({ permissions: { tools: ['call'] } });
    expect(build(d).resources.tools).toEqual([]);
    const b = binding({ resource_policy: { allowed_tool_names: ['exec', 'echo', 'echo', 'ghost'], denied_tool_names: ['exec'] } });
    const { resources, warnings } = build(d, b);
    expect(resources.tools).toEqual([{ tool_name: 'echo', tool_type: 'mcp', description: 'echoes' }]);
    expect(warnings.join('\n')).toContain('ghost');
    expect(build(descriptor({ permissions: { tools: [] } }), b).resources.tools).toEqual([]);
  });

  it('needs the knowledge_retrieval capability for config-selected knowledge bases (AC-025)', () => {
    const config = [{ name: 'kbs', type: 'knowledge-base-multi-selector' }];
    const value = { kbs: ['kb1', 'kb1', '__none__', '', 'kb-missing'] };
    const full = build(descriptor({ permissions: { knowledge_bases: ['retrieve'] }, capabilities: { knowledge_retrieval: true }, config }), binding(), value);
    expect(full.resources.knowledge_bases).toEqual([{ kb_id: 'kb1', kb_name: 'Docs', kb_type: 'vector' }]);
    expect(full.warnings.join('\n')).toContain('kb-missing');
    expect(
      build(descriptor({ permissions: { knowledge_bases: ['retrieve'] }, capabilities: { knowledge_retrieval: false }, config }), binding(), value).resources
        .knowledge_bases,
    ).toEqual([]);
    expect(
      build(descriptor({ permissions: { knowledge_bases: [] }, capabilities: { knowledge_retrieval: true }, config }), binding(), value).resources
        .knowledge_bases,
    ).toEqual([]);
    // policy grants count even without the capability
    const policy = binding({ resource_policy: { allowed_kb_uuids: ['kb1'] } });
    expect(build(descriptor({ permissions: { knowledge_bases: ['list'] } }), policy).resources.knowledge_bases.map((k) => k.kb_id)).toEqual(['kb1']);
  });

  it('computes storage from the manifest and the policy (AC-026); files and platform capabilities stay empty', () => {
    const d = descriptor({ permissions: { storage: ['plugin', 'workspace'] } });
    expect(build(d).resources.storage).toEqual({ plugin_storage: true, workspace_storage: false });
    expect(build(d, binding({ resource_policy: { allow_workspace_storage: true, allow_plugin_storage: false } })).resources.storage).toEqual({
      plugin_storage: false,
      workspace_storage: true,
    });
    expect(build(descriptor({ permissions: { storage: [] } })).resources.storage).toEqual({ plugin_storage: false, workspace_storage: false });
    expect(build(d).resources.files).toEqual([]);
    expect(build(d).resources.platform_capabilities).toEqual({});
  });
});

describe('run sessions', () => {
  function session(run_id: string): RunSession {
    const d = descriptor({ permissions: { models: ['invoke'], storage: ['plugin'] } });
    const resources = buildResources(d, binding({ resource_policy: { allowed_model_uuids: ['m-fake'] } }), {}, catalog, () => {});
    return {
      run_id,
      runner_id: d.id,
      binding_id: 'b1',
      plugin_identity: 'acme/scripted',
      event_id: 'ev-1',
      conversation_id: 'c1',
      resources,
      permissions: d.permissions,
      state_policy: { enable_state: true, state_scopes: ['conversation', 'actor'] },
      scope_keys: {},
      state_columns: {
        runner_id: d.id,
        binding_identity: 'b1',
        bot_id: null,
        workspace_id: null,
        conversation_id: 'c1',
        thread_id: null,
        actor_type: null,
        actor_id: null,
        subject_type: null,
        subject_id: null,
      },
      deadline_at: null,
      started_at: 100,
      last_activity_at: 100,
      authorized: authorizedIds(resources),
    };
  }

  it('answers isResourceAllowed from the precomputed sets and the storage booleans', () => {
    const s = session('r1');
    expect(isResourceAllowed(s, 'model', 'm-fake')).toBe(true);
    expect(isResourceAllowed(s, 'model', 'm-other')).toBe(false);
    expect(isResourceAllowed(s, 'storage', 'plugin')).toBe(true);
    expect(isResourceAllowed(s, 'storage', 'workspace')).toBe(false);
    expect(isResourceAllowed(s, 'storage', 'binding')).toBe(false);
    expect(isResourceAllowed(s, 'file', 'any')).toBe(false);
  });

  it('never registers a run id twice, unregisters idempotently and removes stale sessions', () => {
    const reg = new SessionRegistry();
    reg.register(session('r1'));
    expect(() => reg.register(session('r1'))).toThrow();
    reg.unregister('r1');
    reg.unregister('r1');
    expect(reg.get('r1')).toBeUndefined();
    expect(() => reg.register(session('r1'))).toThrow();
    reg.register(session('r2'));
    reg.register(session('r3'));
    reg.touch('r3', 5000);
    expect(reg.byPlugin('acme/scripted').map((s) => s.run_id)).toEqual(['r2', 'r3']);
    expect(reg.cleanupStale(4000)).toBe(1);
    expect(reg.listActive().map((s) => s.run_id)).toEqual(['r3']);
  });
});
