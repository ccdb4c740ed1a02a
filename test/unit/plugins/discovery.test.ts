// Manifest discovery: descriptors, drift tolerance, strictness, and bad plugins skipped with one
// warning each (AC-012, AC-013, AC-014).
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { discoverPlugins } from '../../../src/core/plugins/discovery.js';
import { BUNDLED_RUNNERS_DIR, loadCatalog } from '../../../src/runtime/local-host.js';
import { RunnerDescriptorSchema } from '../../../src/core/protocol/index.js';
import { FIXTURE_RUNNERS } from '../../helpers/plugins.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'lbot-discovery-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

type Yaml = Record<string, unknown>;

function pluginManifest(author: string, name: string, extra: Yaml = {}): Yaml {
  return {
    apiVersion: 'langbot/v1',
    kind: 'Plugin',
    metadata: { author, name, version: '1.2.3' },
    spec: { components: { AgentRunner: { fromDirs: [{ path: 'components/agent_runner/' }] } } },
    execution: { node: { path: 'main.js' } },
    ...extra,
  };
}

function component(name: string | undefined, spec: Yaml = {}, metadata: Yaml = {}): Yaml {
  return { apiVersion: 'langbot/v1', kind: 'AgentRunner', metadata: { ...(name === undefined ? {} : { name }), ...metadata }, spec };
}

async function writePlugin(dir: string, manifest: Yaml | string, components: Record<string, Yaml | string> = {}): Promise<string> {
  const full = path.join(root, dir);
  await mkdir(path.join(full, 'components', 'agent_runner'), { recursive: true });
  await writeFile(path.join(full, 'manifest.yaml'), typeof manifest === 'string' ? manifest : stringify(manifest));
  for (const [file, doc] of Object.entries(components)) {
    await writeFile(path.join(full, 'components', 'agent_runner', file), typeof doc === 'string' ? doc : stringify(doc));
  }
  return full;
}

describe('discoverPlugins', () => {
  it('lists the fixture runners with complete descriptors (AC-012)', async () => {
    for (const name of ['echo', 'scripted']) await cp(path.join(FIXTURE_RUNNERS, name), path.join(root, name), { recursive: true });
    const { runners, plugins, warnings } = await discoverPlugins(root);
    expect(warnings).toEqual([]);
    expect(runners.map((r) => r.id)).toEqual(['plugin:acme/echo/default', 'plugin:acme/scripted/default']);
    for (const r of runners) expect(RunnerDescriptorSchema.safeParse(r).success).toBe(true);
    const echo = runners[0];
    expect(echo?.config_schema[0]?.id).toBe('plugin:acme/echo/default.prefix');
    expect(echo?.plugin_version).toBe('0.1.0');
    expect(echo?.compatible).toBe(true);
    const scripted = runners[1];
    expect(scripted?.permissions.history).toEqual(['page', 'search']);
    expect(scripted?.capabilities.streaming).toBe(true);
    expect(plugins.get('acme/scripted')).toMatchObject({
      identity: 'acme/scripted',
      dir: path.join(root, 'scripted'),
      execution: { node: { path: 'main.js' } },
    });
  });

  it('fills missing config ids with <runner_id>.<name or index> and keeps given ones', async () => {
    await writePlugin('p', pluginManifest('a', 'p'), {
      'default.yaml': component('default', {
        config: [
          { name: 'model', type: 'llm-model-selector' },
          { name: '', type: 'string' },
          { name: 'x', type: 'string', id: 'custom' },
        ],
      }),
    });
    const { runners } = await discoverPlugins(root);
    expect(runners[0]?.config_schema.map((c) => c.id)).toEqual(['plugin:a/p/default.model', 'plugin:a/p/default.1', 'custom']);
  });

  it('skips a kind: Tool plugin and a component without metadata.name, one warning each (AC-013)', async () => {
    await writePlugin('good', pluginManifest('acme', 'good'), { 'default.yaml': component('default') });
    const tool = await writePlugin('tool', { ...pluginManifest('acme', 'tool'), kind: 'Tool' }, { 'default.yaml': component('default') });
    const nameless = await writePlugin('nameless', pluginManifest('acme', 'nameless'), { 'default.yaml': component(undefined, {}, { label: { en_US: 'x' } }) });
    const { runners, warnings } = await discoverPlugins(root);
    expect(runners.map((r) => r.id)).toEqual(['plugin:acme/good/default']);
    expect(warnings).toHaveLength(2);
    expect(warnings.find((w) => w.startsWith(tool))).toMatch(/kind "Tool", expected "Plugin"/);
    expect(warnings.find((w) => w.startsWith(nameless))).toMatch(/metadata\.name/);
  });

  it('falls back to {name: name} when the label is missing, without a warning (AC-013)', async () => {
    await writePlugin('p', pluginManifest('a', 'p'), { 'r.yaml': component('r') });
    const { runners, warnings } = await discoverPlugins(root);
    expect(runners[0]?.label).toEqual({ r: 'r' });
    expect(runners[0]?.description).toBeNull();
    expect(warnings).toEqual([]);
  });

  it('lists a protocol_version "2" runner as incompatible naming the supported versions (AC-014)', async () => {
    await writePlugin('p', pluginManifest('a', 'p'), { 'default.yaml': component('default', { protocol_version: '2' }) });
    const { runners, warnings } = await discoverPlugins(root);
    expect(runners[0]?.compatible).toBe(false);
    expect(runners[0]?.incompatible_reason).toContain('"2"');
    expect(runners[0]?.incompatible_reason).toContain('supports protocol version "1"');
    expect(warnings).toHaveLength(1);
  });

  it('tolerates real-world drift: apiVersion v1, ./ prefixes, unknown optional keys, a component execution block, .yml', async () => {
    await writePlugin(
      'drift',
      {
        ...pluginManifest('langbot', 'drift'),
        apiVersion: 'v1',
        icon: 'icon.svg',
        metadata: { author: 'langbot', name: 'drift', version: 1, repository: 'https://example.invalid' },
        spec: { components: { AgentRunner: { fromDirs: [{ path: './components/agent_runner' }] }, Tool: { fromDirs: [{ path: './tools' }] } } },
        execution: { node: { path: './dist/main.js' } },
      },
      {
        'default.yml': component('default', { capabilities: null, permissions: { models: ['invoke'] }, extra_key: 1 }, { label: 'Plain label' }),
      },
    );
    const text = await readFile(path.join(root, 'drift', 'components', 'agent_runner', 'default.yml'), 'utf8');
    await writeFile(
      path.join(root, 'drift', 'components', 'agent_runner', 'default.yml'),
      `${text}execution:\n  python: { path: ./main.py, attr: DefaultAgentRunner }\n`,
    );
    const { runners, plugins, warnings } = await discoverPlugins(root);
    expect(warnings).toEqual([]);
    expect(runners[0]).toMatchObject({ id: 'plugin:langbot/drift/default', label: { en_US: 'Plain label' }, plugin_version: '1' });
    expect(plugins.get('langbot/drift')?.execution).toEqual({ node: { path: 'dist/main.js' } });
  });

  it('is strict about unknown capability and permission values', async () => {
    await writePlugin('caps', pluginManifest('a', 'caps'), { 'default.yaml': component('default', { capabilities: { teleport: true } }) });
    await writePlugin('perms', pluginManifest('a', 'perms'), { 'default.yaml': component('default', { permissions: { models: ['invoke', 'train'] } }) });
    const { runners, warnings } = await discoverPlugins(root);
    expect(runners).toEqual([]);
    expect(warnings).toHaveLength(2);
    expect(warnings.join('\n')).toMatch(/teleport/);
    expect(warnings.join('\n')).toMatch(/models/);
  });

  it('lists an execution.python plugin (it is refused at start time, not at discovery)', async () => {
    await writePlugin(
      'py',
      { ...pluginManifest('a', 'py'), execution: { python: { path: 'main.py', attr: 'Runner' } } },
      { 'default.yaml': component('default') },
    );
    const { runners, plugins } = await discoverPlugins(root);
    expect(runners.map((r) => r.id)).toEqual(['plugin:a/py/default']);
    expect(plugins.get('a/py')?.execution).toEqual({ python: { path: 'main.py', attr: 'Runner' } });
  });

  it('keeps going past unreadable YAML, duplicate identities, duplicate runner names and escaping dirs', async () => {
    await writePlugin('a-broken', 'kind: Plugin\nmetadata: [unclosed\n');
    await writePlugin('b-first', pluginManifest('acme', 'same'), { 'default.yaml': component('default'), 'dup.yaml': component('default') });
    await writePlugin('c-second', pluginManifest('acme', 'same'), { 'default.yaml': component('default') });
    await writePlugin('d-escape', {
      ...pluginManifest('acme', 'escape'),
      spec: { components: { AgentRunner: { fromDirs: [{ path: '../b-first/components/agent_runner' }] } } },
    });
    await mkdir(path.join(root, 'not-a-plugin'));
    await writeFile(path.join(root, 'stray-file.yaml'), 'kind: Plugin\n');
    const { runners, warnings } = await discoverPlugins(root);
    expect(runners.map((r) => r.id)).toEqual(['plugin:acme/same/default']);
    expect(warnings.find((w) => w.includes('a-broken'))).toMatch(/not valid YAML/);
    expect(warnings.find((w) => w.includes('dup.yaml'))).toMatch(/already declares metadata\.name "default"/);
    expect(warnings.find((w) => w.startsWith(path.join(root, 'c-second')))).toMatch(/already provided by/);
    expect(warnings.find((w) => w.includes('d-escape'))).toMatch(/outside the plugin directory/);
    expect(warnings).toHaveLength(4);
  });

  it('skips a hostile package: an oversized manifest, an alias bomb in a component', async () => {
    await writePlugin('huge', `${stringify(pluginManifest('acme', 'huge'))}# ${'x'.repeat(300 * 1024)}\n`);
    const bomb = ['apiVersion: langbot/v1', 'kind: AgentRunner', 'metadata: {name: default}', 'l0: &l0 [x, x, x, x, x, x, x, x]'];
    for (let i = 1; i <= 8; i++)
      bomb.push(
        `l${i}: &l${i} [${Array(8)
          .fill(`*l${i - 1}`)
          .join(', ')}]`,
      );
    await writePlugin('bomb', pluginManifest('acme', 'bomb'), { 'default.yaml': `${bomb.join('\n')}\nspec: *l8\n` });
    await writePlugin('fine', pluginManifest('acme', 'fine'), { 'default.yaml': component('default') });
    const { runners, warnings } = await discoverPlugins(root);
    expect(runners.map((r) => r.id)).toEqual(['plugin:acme/fine/default']);
    expect(warnings.find((w) => w.includes('huge'))).toMatch(/manifest\.yaml is \d+ bytes, more than the 262144 a manifest may have/);
    expect(warnings.find((w) => w.includes('bomb'))).toMatch(/default\.yaml is not valid YAML: aliases of mappings or sequences are not supported/);
    expect(warnings).toHaveLength(2);
  });

  it('returns nothing for a missing plugins dir', async () => {
    expect(await discoverPlugins(path.join(root, 'nope'))).toEqual({ runners: [], plugins: new Map(), warnings: [] });
  });
});

describe('bundled runners', () => {
  it('the catalog holds the bundled local agent; a plugins-dir plugin of the same identity replaces it', async () => {
    const plain = await loadCatalog(path.join(root, 'none'));
    const bundled = plain.runners.find((r) => r.id === 'plugin:langbot/local-agent/default');
    expect(bundled?.plugin_dir).toBe(path.join(BUNDLED_RUNNERS_DIR, 'local-agent'));
    expect(bundled?.config_schema.find((i) => i.name === 'max-tool-iterations')?.default).toBe(100);
    expect(plain.warnings).toEqual([]);

    await writePlugin('mine', pluginManifest('langbot', 'local-agent'), { 'default.yaml': component('default') });
    await writePlugin('other', pluginManifest('acme', 'other'), { 'default.yaml': component('default') });
    const mixed = await loadCatalog(root);
    expect(mixed.runners.filter((r) => r.id === 'plugin:langbot/local-agent/default').map((r) => r.plugin_dir)).toEqual([path.join(root, 'mine')]);
    expect(mixed.runners.map((r) => r.id)).toContain('plugin:acme/other/default');
    expect(mixed.plugins.get('langbot/local-agent')?.dir).toBe(path.join(root, 'mine'));
  });
});
