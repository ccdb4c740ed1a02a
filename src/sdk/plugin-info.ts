// What a plugin says about itself in its `initialize` answer: manifest.yaml metadata and the raw
// component manifests of its runners, or the definePlugin options when there is no manifest.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { PluginManifestSchema, type InitializeResult } from '../core/protocol/index.js';
import type { Plugin } from './define.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function readYaml(file: string): Promise<unknown> {
  try {
    const { parse } = await import('yaml'); // only plugins started outside lbot read their YAML
    return parse(await readFile(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Builds the `initialize` result from `dir` (the plugin directory, normally the cwd). When lbot started the
 * process it names the plugin in `hostIdentity` (LBOT_PLUGIN_IDENTITY): lbot has read the manifests already,
 * so the answer is built without parsing YAML again, which keeps plugin start-up short.
 */
export async function readPluginInfo(dir: string, plugin: Plugin, hostIdentity?: string): Promise<InitializeResult> {
  const [hostAuthor, hostName, ...extra] = (hostIdentity ?? '').split('/');
  if (hostAuthor && hostName && extra.length === 0) {
    const runners = Object.keys(plugin.runners).map((name) => ({ kind: 'AgentRunner', metadata: { name } }));
    const info = plugin.info ?? { author: hostAuthor, name: hostName };
    return { plugin: { author: info.author, name: info.name, version: info.version ?? '0.0.0' }, runners };
  }
  const manifest = PluginManifestSchema.safeParse(await readYaml(path.join(dir, 'manifest.yaml')));
  const fallbackRunners = Object.keys(plugin.runners).map((name) => ({ kind: 'AgentRunner', metadata: { name } }));
  if (!manifest.success) {
    const info = plugin.info ?? { author: 'unknown', name: 'unknown' };
    return { plugin: { author: info.author, name: info.name, version: info.version ?? '0.0.0' }, runners: fallbackRunners };
  }
  const runners: Record<string, unknown>[] = [];
  for (const { path: rel } of manifest.data.spec.components.AgentRunner?.fromDirs ?? []) {
    const componentDir = path.resolve(dir, rel);
    const files = await readdir(componentDir).catch(() => []);
    for (const file of files.filter((f) => /\.ya?ml$/i.test(f)).sort()) {
      const doc = await readYaml(path.join(componentDir, file));
      if (isRecord(doc) && doc.kind === 'AgentRunner') runners.push(doc);
    }
  }
  const { author, name, version } = manifest.data.metadata;
  return { plugin: { author, name, version }, runners: runners.length > 0 ? runners : fallbackRunners };
}
