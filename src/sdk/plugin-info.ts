// What a plugin says about itself in its `initialize` answer: manifest.yaml metadata and the raw
// component manifests of its runners, or the definePlugin options when there is no manifest.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { PluginManifestSchema, type InitializeResult } from '../core/protocol/index.js';
import type { Plugin } from './define.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function readYaml(file: string): Promise<unknown> {
  try {
    return parseYaml(await readFile(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Builds the `initialize` result from `dir` (the plugin directory, normally the cwd). */
export async function readPluginInfo(dir: string, plugin: Plugin): Promise<InitializeResult> {
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
