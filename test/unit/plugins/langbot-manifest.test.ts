// LangBot plugin manifests (execution.python): unknown capability keys, permission groups and
// operations are kept and reported instead of dropping the runner; ids and paths stay strict.
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverPlugin, discoverPlugins } from '../../../src/core/plugins/discovery.js';
import { setAsideUnrecognized } from '../../../src/core/plugins/langbot-manifest.js';
import { FIXTURE_RUNNERS } from '../../helpers/plugins.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'lbot-langbot-manifest-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('LangBot manifests', () => {
  it('loads the LocalAgent-style fixture with skill_authoring, steering, interactions and count_tokens', async () => {
    const found = await discoverPlugin(path.join(FIXTURE_RUNNERS, 'langbot-wire'));
    expect(found.runners.map((r) => r.id)).toEqual(['plugin:lbot-fixtures/wire-agent/default']);
    const [runner] = found.runners;
    expect(runner?.permissions.models).toEqual(['invoke', 'stream', 'count_tokens', 'rerank']);
    expect(runner?.capabilities.streaming).toBe(true);
    expect(runner?.unrecognized).toEqual({
      capabilities: { skill_authoring: true, steering: true, interactions: true },
      permissions: { interactions: ['request'] },
    });
    expect(found.warnings).toEqual([expect.stringMatching(/does not understand capabilities\.skill_authoring; .*permissions\.interactions; ignored/)]);
    expect(found.plugins.get('lbot-fixtures/wire-agent')?.execution).toEqual({ python: { path: 'main.py', attr: 'WireAgentPlugin' } });
  });

  it('sets aside unknown operations of a known group and keeps the known ones', () => {
    const out = setAsideUnrecognized({ kind: 'AgentRunner', spec: { permissions: { models: ['invoke', 'teleport'], platform_api: ['send'] } } });
    expect(out.doc).toEqual({ kind: 'AgentRunner', spec: { permissions: { models: ['invoke'], platform_api: ['send'] } } });
    expect(out.unrecognized).toEqual({ capabilities: {}, permissions: { models: ['teleport'] } });
  });

  it('stays strict for lbot plugins and for malformed values', async () => {
    const dir = path.join(root, 'plugins');
    await cp(path.join(FIXTURE_RUNNERS, 'langbot-wire'), path.join(dir, 'py'), { recursive: true });
    await cp(path.join(FIXTURE_RUNNERS, 'langbot-wire'), path.join(dir, 'node'), { recursive: true });
    const manifest = path.join(dir, 'node', 'manifest.yaml');
    const { readFile } = await import('node:fs/promises');
    const text = (await readFile(manifest, 'utf8'))
      .replace(/execution:[\s\S]*$/, 'execution:\n  node:\n    path: main.js\n')
      .replace('wire-agent', 'wire-node');
    await writeFile(manifest, text);
    // A non-boolean known capability is still refused in a LangBot plugin.
    const comp = path.join(dir, 'py', 'components', 'agent_runner', 'bad.yaml');
    await writeFile(comp, 'kind: AgentRunner\nmetadata: {name: bad}\nspec:\n  capabilities: {streaming: "yes", steering: true}\n');
    const found = await discoverPlugins(dir);
    expect(found.runners.map((r) => r.id)).toEqual(['plugin:lbot-fixtures/wire-agent/default']);
    expect(found.warnings.join('\n')).toMatch(/bad\.yaml: skipped runner: spec\.capabilities\.streaming/);
    expect(found.warnings.join('\n')).toMatch(/node\/components\/agent_runner\/default\.yaml: skipped runner: spec\.capabilities: Unrecognized keys/);
  });
});
