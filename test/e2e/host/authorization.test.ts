// Acceptance §2, authorization and permissions (AC-020 … AC-035), plus the audit requirements:
// foreign, unknown and finished run ids and ungranted resources are refused and audited.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  api,
  completedTexts,
  done,
  dump,
  emit,
  errorOf,
  eventPath,
  F_CFG_MODELS,
  REPO_ROOT,
  list,
  pick,
  reports,
  say,
  scenario,
  SCRIPTED,
  str,
  summaries,
  type Scenario,
} from './harness.js';

const user = (content: string) => [{ role: 'user', content }];

async function setPermissions(s: Scenario, permissions: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> {
  await s.editRunner((doc) => {
    const spec = doc.spec as Record<string, unknown>;
    spec.permissions = { ...(spec.permissions as Record<string, unknown>), ...permissions };
    Object.assign(spec, extra);
  });
}

/** A binding file for the scripted runner with the given policy overrides. */
async function bindingFile(s: Scenario, overrides: Record<string, unknown>): Promise<string> {
  return s.writeJson(`binding-${randomUUID()}.json`, { binding_id: 'b1', runner_id: SCRIPTED, ...overrides });
}

/** An event file: msg.json with the given fields replaced. */
async function eventVariant(s: Scenario, fields: Record<string, unknown>): Promise<string> {
  const base = JSON.parse(await readFile(eventPath('msg.json'), 'utf8')) as Record<string, unknown>;
  return s.writeJson(`event-${randomUUID()}.json`, { ...base, ...fields });
}

async function apiCalls(s: Scenario, runId: string): Promise<unknown[]> {
  return list(await s.json(['runs', 'show', runId]), 'api_calls');
}

describe('authorization and permissions', () => {
  it('AC-020 model granted through a config selector', async () => {
    const s = await scenario();
    await s.writeConfig({ models: F_CFG_MODELS });
    await setPermissions(s, { models: ['invoke'] }, { config: [{ name: 'model', type: 'llm-model-selector' }] });
    const script = [
      dump,
      api('models.invoke', { model_id: 'm-fake', messages: user('hi') }),
      api('models.invoke', { model_id: 'm-other', messages: user('hi') }),
      done(),
    ];
    const r = await s.run(script, { json: true, config: { model: 'm-fake' } });
    expect(r.exitCode, r.stderr).toBe(0);
    const [ctx, first, second] = reports(r.stdout);
    expect(pick(ctx, 'resources.models')).toEqual([{ model_id: 'm-fake', model_type: 'llm', provider: 'fake' }]);
    expect(first).toMatchObject({ ok: true, result: { message: { role: 'assistant', content: 'FAKE_PONG' } } });
    expect(second).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('AC-020 variant: the manifest lacks the model permission', async () => {
    const s = await scenario();
    await s.writeConfig({ models: F_CFG_MODELS });
    await setPermissions(s, { models: [] }, { config: [{ name: 'model', type: 'llm-model-selector' }] });
    const r = await s.run([dump, api('models.invoke', { model_id: 'm-fake', messages: user('hi') }), done()], { json: true, config: { model: 'm-fake' } });
    expect(r.exitCode, r.stderr).toBe(0);
    const [ctx, call] = reports(r.stdout);
    expect(pick(ctx, 'resources.models')).toEqual([]);
    expect(call).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('AC-022 fallback, rerank and binding-level model grants', async () => {
    const s = await scenario();
    await s.writeConfig({ models: F_CFG_MODELS });
    await setPermissions(
      s,
      { models: ['invoke', 'rerank'] },
      {
        config: [
          { name: 'model', type: 'model-fallback-selector' },
          { name: 'rerank', type: 'rerank-model-selector' },
        ],
      },
    );
    const r = await s.run([dump, done()], { json: true, config: { model: { primary: 'm-fake', fallbacks: ['m-other', '__none__'] }, rerank: '__none__' } });
    expect(r.exitCode, r.stderr).toBe(0);
    const models = list(reports(r.stdout)[0], 'resources.models');
    expect(models.map((m) => pick(m, 'model_id')).sort()).toEqual(['m-fake', 'm-other']);
    expect(models.filter((m) => pick(m, 'model_type') === 'rerank')).toEqual([]);
    expect(JSON.stringify(models)).not.toContain('__none__');
  });

  it('AC-022 variant: binding-level grant needs an LLM permission', async () => {
    const s = await scenario();
    await s.writeConfig({ models: F_CFG_MODELS });
    const binding = await bindingFile(s, { resource_policy: { allowed_model_uuids: ['m-other'] } });
    await setPermissions(s, { models: ['invoke'] });
    const invoke = await s.run([dump, done()], { json: true, args: ['--binding', binding] });
    expect(invoke.exitCode, invoke.stderr).toBe(0);
    expect(list(reports(invoke.stdout)[0], 'resources.models').map((m) => pick(m, 'model_id'))).toContain('m-other');
    await setPermissions(s, { models: ['rerank'] });
    const rerank = await s.run([dump, done()], { json: true, args: ['--binding', binding] });
    expect(rerank.exitCode, rerank.stderr).toBe(0);
    expect(list(reports(rerank.stdout)[0], 'resources.models').map((m) => pick(m, 'model_id'))).not.toContain('m-other');
  });

  it('AC-024 tool grants (F-MCP echo server)', async () => {
    const s = await scenario();
    await s.writeConfig({ mcp: { servers: [{ name: 'echo', command: [process.execPath, path.join(REPO_ROOT, 'fixtures', 'mcp', 'echo.js')] }] } });
    const binding = await bindingFile(s, { resource_policy: { allowed_tool_names: ['echo'] } });
    const script = [
      dump,
      api('tools.get_detail', { tool_name: 'echo' }),
      api('tools.call', { tool_name: 'echo', parameters: { text: 'x' } }),
      api('tools.call', { tool_name: 'slow', parameters: { ms: 1 } }),
      done(),
    ];
    const r = await s.run(script, { json: true, args: ['--binding', binding] });
    expect(r.exitCode, r.stderr).toBe(0);
    const [ctx, detail, echo, slow] = reports(r.stdout);
    expect(list(ctx, 'resources.tools').map((t) => pick(t, 'tool_name'))).toEqual(['echo']);
    expect(detail).toMatchObject({ ok: true, result: { tool: { name: 'echo', parameters: { properties: { text: expect.any(Object) } } } } });
    expect(echo).toMatchObject({ ok: true });
    expect(JSON.stringify(pick(echo, 'result.result'))).toContain('"x"');
    expect(slow).toMatchObject({ ok: false, error: { code: 'unauthorized' } });

    await setPermissions(s, { tools: [] });
    const none = await s.run(
      [dump, api('tools.call', { tool_name: 'echo', parameters: { text: 'x' } }), api('tools.get_detail', { tool_name: 'echo' }), done()],
      { json: true, args: ['--binding', binding] },
    );
    expect(none.exitCode, none.stderr).toBe(0);
    const [ctx2, call, detail2] = reports(none.stdout);
    expect(pick(ctx2, 'resources.tools')).toEqual([]);
    expect(call).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(detail2).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('AC-025 knowledge bases: missing capability or permission grants nothing; unknown ids are skipped', async () => {
    const s = await scenario();
    const kbConfig = { config: [{ name: 'kbs', type: 'knowledge-base-multi-selector' }] };
    const config = { kbs: ['kb1', 'kb1', '__none__', ''] };
    const script = [dump, api('knowledge.retrieve', { kb_id: 'kb1', query_text: 'q' }), done()];
    for (const [label, perms, capability] of [
      ['no capability', ['retrieve'], false],
      ['no permission', [], true],
    ] as const) {
      await s.editRunner((doc) => {
        const spec = doc.spec as Record<string, Record<string, unknown>>;
        spec.permissions = { ...spec.permissions, knowledge_bases: [...perms] };
        spec.capabilities = { ...spec.capabilities, knowledge_retrieval: capability };
        Object.assign(spec, kbConfig);
      });
      const r = await s.run(script, { json: true, config });
      expect(r.exitCode, label).toBe(0);
      const [ctx, call] = reports(r.stdout);
      expect(pick(ctx, 'resources.knowledge_bases'), label).toEqual([]);
      expect(call, label).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    }
    // Both flags set, but no knowledge base kb1 exists in this host: skipped with a warning, the run goes on.
    await s.editRunner((doc) => {
      const spec = doc.spec as Record<string, Record<string, unknown>>;
      spec.permissions = { ...spec.permissions, knowledge_bases: ['retrieve'] };
      spec.capabilities = { ...spec.capabilities, knowledge_retrieval: true };
    });
    const r = await s.run([dump, done()], { json: true, config });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(pick(reports(r.stdout)[0], 'resources.knowledge_bases')).toEqual([]);
    expect(r.stderr).toMatch(/warning.*kb1/);

    // kb1 configured (built-in local engine): listed once, and retrievable.
    await s.writeConfig({
      knowledge_bases: [
        {
          id: 'kb1',
          name: 'Handbook',
          documents: [
            { id: 'd1', text: 'Deploys happen at five' },
            { id: 'd2', text: 'Lunch is at noon' },
          ],
        },
      ],
    });
    const granted = await s.run([dump, api('knowledge.retrieve', { kb_id: 'kb1', query_text: 'when are deploys' }), done()], { json: true, config });
    expect(granted.exitCode, granted.stderr).toBe(0);
    const [ctx, retrieved] = reports(granted.stdout);
    expect(pick(ctx, 'resources.knowledge_bases')).toEqual([{ kb_id: 'kb1', kb_name: 'Handbook', kb_type: 'local' }]);
    expect(retrieved).toMatchObject({ ok: true, result: { results: [{ document_id: 'd1' }] } });
  });

  it('AC-026 storage areas', async () => {
    const s = await scenario();
    await setPermissions(s, { storage: ['plugin'] });
    const value_base64 = Buffer.from('v').toString('base64');
    const script = [
      dump,
      api('storage.set', { area: 'plugin', key: 'k', value_base64 }),
      api('storage.set', { area: 'workspace', key: 'k', value_base64 }),
      done(),
    ];
    const r = await s.run(script, { json: true });
    expect(r.exitCode, r.stderr).toBe(0);
    const [ctx, plugin, workspace] = reports(r.stdout);
    expect(pick(ctx, 'resources.storage')).toEqual({ plugin_storage: true, workspace_storage: false });
    expect(plugin).toMatchObject({ ok: true, result: { success: true } });
    expect(workspace).toMatchObject({ ok: false, error: { code: 'unauthorized' } });

    const binding = await bindingFile(s, { resource_policy: { allow_plugin_storage: false } });
    const denied = await s.run([api('storage.set', { area: 'plugin', key: 'k', value_base64 }), done()], { json: true, args: ['--binding', binding] });
    expect(reports(denied.stdout)[0]).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('AC-027 unknown or finished run ids are rejected and audited', async () => {
    const s = await scenario();
    const first = await s.run([say('first'), done()], { json: true });
    expect(first.exitCode, first.stderr).toBe(0);
    const finished = str(summaries(first.stdout)[0], 'run_id');
    const random = randomUUID();
    const get = { scope: 'conversation', key: 'k' };
    const r = await s.run([api('state.get', get, { as_run_id: random }), api('state.get', get, { as_run_id: finished }), done()], { json: true });
    expect(r.exitCode, r.stderr).toBe(0);
    const [unknownRun, finishedRun] = reports(r.stdout);
    expect(unknownRun).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(finishedRun).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    const current = str(summaries(r.stdout)[0], 'run_id');
    const calls = await apiCalls(s, current);
    expect(calls).toContainEqual(expect.objectContaining({ action: 'state.get', decision: 'denied', code: 'unauthorized', as_run_id: random }));
    expect(calls).toContainEqual(expect.objectContaining({ action: 'state.get', decision: 'denied', code: 'unauthorized', as_run_id: finished }));
  });

  it('ungranted resources are refused with unauthorized or not_found, and every attempt is audited', async () => {
    const s = await scenario();
    await s.writeConfig({ models: F_CFG_MODELS });
    // a conversation c2 with an event of its own
    const c2 = await eventVariant(s, { event_id: 'ev-c2', conversation_id: 'c2' });
    expect((await s.run([say('in c2'), done()], { event: c2 })).exitCode).toBe(0);
    const script = [
      api('models.invoke', { model_id: 'm-fake', messages: user('hi') }),
      api('storage.set', { area: 'workspace', key: 'k', value_base64: 'dg==' }),
      api('history.page', { conversation_id: 'c2' }),
      api('events.get', { event_id: 'ev-c2' }),
      api('state.set', { scope: 'runner', key: 'k', value: 1 }),
      api('tools.call', { tool_name: 'exec', parameters: {} }),
      api('state.get', { scope: 'conversation', key: 'k' }),
      done(),
    ];
    const r = await s.run(script, { json: true });
    expect(r.exitCode, r.stderr).toBe(0);
    const codes = reports(r.stdout).map((o) => (pick(o, 'ok') ? 'ok' : pick(o, 'error.code')));
    expect(codes).toEqual(['unauthorized', 'unauthorized', 'unauthorized', 'not_found', 'unauthorized', 'unauthorized', 'ok']);
    const calls = await apiCalls(s, str(summaries(r.stdout)[0], 'run_id'));
    expect(calls.map((c) => [pick(c, 'action'), pick(c, 'decision'), pick(c, 'code')])).toEqual([
      ['models.invoke', 'denied', 'unauthorized'],
      ['storage.set', 'denied', 'unauthorized'],
      ['history.page', 'denied', 'unauthorized'],
      ['events.get', 'denied', 'not_found'],
      ['state.set', 'denied', 'unauthorized'],
      ['tools.call', 'denied', 'unauthorized'],
      ['state.get', 'allowed', null],
    ]);
    for (const c of calls) expect(pick(c, 'resource')).toBeTruthy();
  });

  it('AC-030 runner outside the bound plugins', async () => {
    const s = await scenario();
    // The marker is a file on the host: only an unisolated plugin can leave one there.
    await s.writeConfig({ plugins: { isolation: 'none' } });
    const original = await readFile(path.join(s.plugins.dir('scripted'), 'main.js'), 'utf8');
    const marker = path.join(s.root, 'started');
    const runner = await s.addPlugin('marked', {
      mainJs: `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, '');\n${original}`,
    });
    const binding = await s.writeJson('b.json', {
      binding_id: 'b1',
      runner_id: runner,
      bound_plugins: ['acme/other'],
      runner_config: { script: [say('x'), done()] },
    });
    const r = await s.lbot(['--json', 'run', '--event', eventPath('msg.json'), '--binding', binding]);
    expect(r.exitCode, r.stderr).toBe(4);
    expect(errorOf(r.stdout)?.code).toBe('runner.not_authorized');
    expect(existsSync(marker)).toBe(false);
    expect(list(await s.page(['events', 'list']), 'items')).toEqual([]);
    // the same binding without the restriction starts the runner (the marker works)
    const open = await s.writeJson('b2.json', {
      binding_id: 'b1',
      runner_id: runner,
      bound_plugins: ['acme/marked'],
      runner_config: { script: [say('x'), done()] },
    });
    expect((await s.lbot(['run', '--event', eventPath('msg.json'), '--binding', open])).exitCode).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });

  it('AC-031 history is limited to the current conversation', async () => {
    const s = await scenario();
    const c2 = await eventVariant(s, {
      event_id: 'ev-c2',
      conversation_id: 'c2',
      input: { text: 'in c2', contents: [{ type: 'text', text: 'in c2' }], attachments: [] },
    });
    expect((await s.run([say('c2 reply'), done()], { event: c2 })).exitCode).toBe(0);
    expect((await s.run([say('c1 reply'), done()])).exitCode).toBe(0);
    const r = await s.run([api('history.page'), api('history.page', { conversation_id: 'c2' }), done()], { json: true });
    expect(r.exitCode, r.stderr).toBe(0);
    const [own, other] = reports(r.stdout);
    expect(pick(own, 'ok')).toBe(true);
    const items = list(own, 'result.items');
    expect(items.length).toBeGreaterThan(0);
    expect(new Set(items.map((i) => pick(i, 'conversation_id')))).toEqual(new Set(['c1']));
    expect(other).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('AC-031 variant: history permission missing', async () => {
    const s = await scenario();
    await setPermissions(s, { history: [] });
    const r = await s.run([dump, api('history.page'), done()], { json: true });
    expect(r.exitCode, r.stderr).toBe(0);
    const [ctx, call] = reports(r.stdout);
    expect(pick(ctx, 'context.available_apis.history_page')).toBe(false);
    expect(call).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('AC-032 events and artifacts outside scope look missing', async () => {
    const s = await scenario();
    const c2 = await eventVariant(s, { event_id: 'ev-x', conversation_id: 'c2' });
    const created = await s.run(
      [emit('artifact.created', { artifact_id: 'art-x', artifact_type: 'file', name: 'x.txt', content_base64: 'eA==' }), say('made'), done()],
      { event: c2 },
    );
    expect(created.exitCode, created.stderr).toBe(0);
    const r = await s.run(
      [
        api('events.get', { event_id: 'ev-x' }),
        api('artifacts.metadata', { artifact_id: 'art-x' }),
        api('artifacts.metadata', { artifact_id: 'does-not-exist' }),
        done(),
      ],
      { json: true },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [event, artifact, missing] = reports(r.stdout);
    for (const o of [event, artifact, missing]) expect(o).toMatchObject({ ok: false, error: { code: 'not_found' } });
    const blank = (o: unknown, id: string) => JSON.stringify(pick(o, 'error')).replaceAll(id, '<id>');
    expect(blank(artifact, 'art-x')).toBe(blank(missing, 'does-not-exist'));
    // the event error has the same shape as the artifact one apart from the kind it names
    expect(Object.keys(pick(event, 'error') as object).sort()).toEqual(Object.keys(pick(missing, 'error') as object).sort());
    // …and as an unknown event id
    const unknown = await s.run([api('events.get', { event_id: 'no-such-event' }), done()], { json: true });
    expect(blank(reports(unknown.stdout)[0], 'no-such-event')).toBe(blank(event, 'ev-x'));
  });

  it('AC-034 platform actions are never executed', async () => {
    const s = await scenario();
    await setPermissions(s, { platform_api: [] });
    const r = await s.run(
      [
        api('platform.request_action', { action: 'message.edit', target: {}, payload: {} }),
        emit('action.requested', { action: 'message.edit', target: {}, payload: {} }),
        say('ok'),
        done(),
      ],
      { json: true },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.type)).toEqual(['message.completed', 'message.completed', 'run.summary']);
    expect(JSON.parse(completedTexts(r.stdout)[0] ?? '')).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    const record = await s.json(['runs', 'show', str(summaries(r.stdout)[0], 'run_id')]);
    expect(list(record, 'observed')).toContainEqual(expect.objectContaining({ type: 'action.requested', executed: false }));
  });

  it('AC-035 calls after the deadline', async () => {
    const s = await scenario();
    const r = await s.run([{ ignore_cancel: true }, { sleep_ms: 2500 }, api('state.get', { scope: 'conversation', key: 'k' }), say('late'), done()], {
      json: true,
      config: { timeout: 2 },
    });
    expect(r.exitCode, r.stderr).toBe(5);
    expect(errorOf(r.stdout)?.code).toBe('runner.timeout');
    expect(r.stdout).not.toContain('late');
    const calls = await apiCalls(s, str(summaries(r.stdout)[0], 'run_id'));
    // The late state.get reached the host (within the cancel grace) and was audited as denied.
    expect(
      calls.map((c) => pick(c, 'action')),
      JSON.stringify(calls),
    ).toContain('state.get');
    for (const c of calls) {
      expect(pick(c, 'decision')).toBe('denied');
      expect(['deadline_exceeded', 'unauthorized']).toContain(pick(c, 'code'));
    }
  });
});
