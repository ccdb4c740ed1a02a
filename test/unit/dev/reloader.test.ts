// The dev reload controller without processes: last good catalog, broken edits as reload errors, one
// reload at a time with the latest change winning, removed plugins.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunnerCatalog } from '../../../src/core/host/ports.js';
import type { DevEvent } from '../../../src/core/dev/events.js';
import { judgePlugin } from '../../../src/core/dev/served-catalog.js';
import type { RunnerDescriptor } from '../../../src/core/protocol/manifest.js';
import { Reloader } from '../../../src/runtime/dev/reloader.js';

const ROOT = path.resolve('/plugins');
const dirOf = (name: string) => path.join(ROOT, name);

function descriptor(plugin: string, label: string): RunnerDescriptor {
  return {
    id: `plugin:acme/${plugin}/default`,
    source: 'plugin',
    label: { en_US: label },
    description: null,
    plugin_author: 'acme',
    plugin_name: plugin,
    runner_name: 'default',
    plugin_version: '0.1.0',
    protocol_version: '1',
    compatible: true,
    incompatible_reason: null,
    config_schema: [],
    capabilities: {
      streaming: false,
      tool_calling: false,
      knowledge_retrieval: false,
      multimodal_input: false,
      event_context: true,
      platform_api: false,
      interrupt: false,
      stateful_session: false,
    },
    permissions: { models: [], tools: [], knowledge_bases: [], history: [], events: [], artifacts: [], storage: [], files: [], platform_api: [] },
    context: {},
    plugin_dir: dirOf(plugin),
  } as RunnerDescriptor;
}

function catalog(entries: Array<{ plugin: string; label: string }>, warnings: string[] = []): RunnerCatalog {
  return {
    runners: entries.map((e) => descriptor(e.plugin, e.label)),
    plugins: new Map(
      entries.map((e) => [`acme/${e.plugin}`, { identity: `acme/${e.plugin}`, dir: dirOf(e.plugin), execution: { node: { path: 'main.js' } } }]),
    ),
    warnings,
  };
}

function harness(initial: RunnerCatalog) {
  let disk = initial;
  const events: DevEvent[] = [];
  const reloads: Array<{ identity: string; labels: string[] }> = [];
  let failNext: string | null = null;
  let settled = 0;
  const host = {
    async reload(identity: string, given?: RunnerCatalog) {
      await new Promise((r) => setImmediate(r));
      if (failNext) {
        const message = failNext;
        failNext = null;
        throw new Error(message);
      }
      reloads.push({ identity, labels: (given?.runners ?? []).map((r) => r.label.en_US ?? '') });
    },
  };
  const reloader = new Reloader({ load: async () => disk, emit: (e) => events.push(e), onSettled: () => settled++ }, initial);
  return {
    reloader,
    host,
    events,
    reloads,
    setDisk: (c: RunnerCatalog) => (disk = c),
    failNextReload: (m: string) => (failNext = m),
    settled: () => settled,
    labels: () => reloader.catalog().runners.map((r) => r.label.en_US),
  };
}

describe('judgePlugin', () => {
  it('tells a clean plugin, a broken one and a missing one apart', () => {
    const fresh = catalog(
      [{ plugin: 'hot', label: 'Hot' }],
      [
        `${dirOf('cold')}: skipped plugin: manifest.yaml is not valid YAML: bad`,
        `${dirOf('warm')}/components/agent_runner/x.yaml: skipped runner: kind is "Nope"`,
      ],
    );
    expect(judgePlugin(fresh, dirOf('hot')).kind).toBe('ok');
    expect(judgePlugin(fresh, dirOf('cold'))).toEqual({ kind: 'broken', reason: 'manifest.yaml is not valid YAML: bad' });
    expect(judgePlugin(fresh, dirOf('warm')).kind).toBe('broken');
    expect(judgePlugin(fresh, dirOf('none')).kind).toBe('gone');
  });
});

describe('Reloader', () => {
  it('starts every plugin warm and serves the new version after a good edit', async () => {
    const h = harness(catalog([{ plugin: 'hot', label: 'Hot v1' }]));
    await h.reloader.start(h.host);
    expect(h.reloads).toEqual([{ identity: 'acme/hot', labels: ['Hot v1'] }]);
    h.setDisk(catalog([{ plugin: 'hot', label: 'Hot v2' }]));
    h.reloader.schedule([dirOf('hot')]);
    await h.reloader.idle();
    expect(h.labels()).toEqual(['Hot v2']);
    expect(h.reloader.plugins()).toMatchObject([{ identity: 'acme/hot', generation: 2, reload_error: null }]);
    expect(h.settled()).toBe(2);
  });

  it('keeps the last good catalog on a broken manifest and clears the error once fixed', async () => {
    const h = harness(catalog([{ plugin: 'hot', label: 'Hot v1' }]));
    await h.reloader.start(h.host);
    h.setDisk(catalog([], [`${dirOf('hot')}: skipped plugin: manifest.yaml is not valid YAML: Nested mappings are not allowed at line 1, column 7`]));
    h.reloader.schedule([dirOf('hot')]);
    await h.reloader.idle();
    expect(h.labels()).toEqual(['Hot v1']);
    expect(h.reloader.plugins()[0]?.reload_error).toContain('not valid YAML: Nested mappings');
    expect(h.events.at(-1)).toMatchObject({ type: 'dev.reload_failed', plugin: 'acme/hot' });
    h.setDisk(catalog([{ plugin: 'hot', label: 'Hot v1' }]));
    h.reloader.schedule([dirOf('hot')]);
    await h.reloader.idle();
    expect(h.reloader.plugins()[0]?.reload_error).toBeNull();
  });

  it('keeps the last good catalog when the new process fails to start', async () => {
    const h = harness(catalog([{ plugin: 'hot', label: 'Hot v1' }]));
    await h.reloader.start(h.host);
    h.setDisk(catalog([{ plugin: 'hot', label: 'Hot v2' }]));
    h.failNextReload('plugin acme/hot exited with status 1 before answering initialize; SyntaxError');
    h.reloader.schedule([dirOf('hot')]);
    await h.reloader.idle();
    expect(h.labels()).toEqual(['Hot v1']);
    expect(h.reloader.plugins()[0]?.reload_error).toContain('SyntaxError');
  });

  it('coalesces changes that arrive during a reload into one more reload of the latest files', async () => {
    const h = harness(catalog([{ plugin: 'hot', label: 'v1' }]));
    await h.reloader.start(h.host);
    h.setDisk(catalog([{ plugin: 'hot', label: 'v2' }]));
    h.reloader.schedule([dirOf('hot')]);
    h.setDisk(catalog([{ plugin: 'hot', label: 'v3' }]));
    h.reloader.schedule([dirOf('hot')]);
    h.reloader.schedule([dirOf('hot')]);
    await h.reloader.idle();
    expect(h.reloads.map((r) => r.labels[0])).toEqual(['v1', 'v3']);
    expect(h.labels()).toEqual(['v3']);
  });

  it('adds new plugin directories and drops removed ones', async () => {
    const h = harness(catalog([{ plugin: 'hot', label: 'Hot' }]));
    await h.reloader.start(h.host);
    h.setDisk(
      catalog([
        { plugin: 'hot', label: 'Hot' },
        { plugin: 'new', label: 'New' },
      ]),
    );
    h.reloader.schedule([dirOf('new')]);
    await h.reloader.idle();
    expect(h.labels()).toEqual(['Hot', 'New']);
    h.setDisk(catalog([{ plugin: 'new', label: 'New' }]));
    h.reloader.schedule([dirOf('hot')]);
    await h.reloader.idle();
    expect(h.labels()).toEqual(['New']);
    expect(h.events.some((e) => e.type === 'dev.plugin_removed' && e.plugin === 'acme/hot')).toBe(true);
  });
});
