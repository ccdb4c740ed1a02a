// Reads runner plugins from a plugins directory: manifest.yaml + component YAMLs → runner descriptors.
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import {
  ComponentManifestSchema,
  PluginManifestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  formatRunnerId,
  type ComponentManifest,
  type ConfigItem,
  type PluginManifest,
  type RunnerDescriptor,
} from '../protocol/index.js';
import type { PluginSpec } from '../host/ports.js';
import { parseManifestYaml } from './manifest-yaml.js';
import { isLangbotExecution, setAsideUnrecognized, unrecognizedNote } from './langbot-manifest.js';

/** What the host needs to start a discovered plugin; the binding adds `env`. */
export type DiscoveredPlugin = Omit<PluginSpec, 'env'> & { version: string; manifest: PluginManifest };

export type DiscoveryResult = {
  runners: RunnerDescriptor[];
  /** Keyed by plugin identity `author/name`. */
  plugins: Map<string, DiscoveredPlugin>;
  /** One line per skipped plugin or component, naming its path and the reason. */
  warnings: string[];
};

const MANIFEST_FILE = 'manifest.yaml';
const COMPONENT_EXT = /\.ya?ml$/i;
const MAX_REASON_ISSUES = 3;

/** Formats zod issues as `path: message; …` so a warning reads as one line. */
export function describeIssues(error: z.ZodError): string {
  const parts = error.issues.slice(0, MAX_REASON_ISSUES).map((issue) => {
    const where = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
    return `${where}: ${issue.message}`;
  });
  const more = error.issues.length - MAX_REASON_ISSUES;
  return more > 0 ? `${parts.join('; ')}; and ${more} more` : parts.join('; ');
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

/** A manifest or component file is a few hundred bytes; anything past this is not one. */
const MAX_YAML_BYTES = 256 * 1024;

async function readYamlFile(file: string): Promise<{ ok: true; value: unknown } | { ok: false; reason: string }> {
  let text: string;
  try {
    const { size } = await stat(file);
    if (size > MAX_YAML_BYTES) return { ok: false, reason: `${path.basename(file)} is ${size} bytes, more than the ${MAX_YAML_BYTES} a manifest may have` };
    text = await readFile(file, 'utf8');
  } catch (err) {
    return { ok: false, reason: `cannot read ${path.basename(file)}: ${err instanceof Error ? err.message : String(err)}` };
  }
  try {
    return { ok: true, value: parseManifestYaml(text) };
  } catch (err) {
    const msg = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return { ok: false, reason: `${path.basename(file)} is not valid YAML: ${msg}` };
  }
}

/** Kind mismatches get their own sentence: it is the commonest mistake (AC-013). */
function kindReason(value: unknown, expected: string, file: string): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `${file} is not a YAML mapping`;
  const kind: unknown = Reflect.get(value, 'kind');
  if (kind !== expected) return `${file} has kind ${JSON.stringify(kind ?? null)}, expected ${JSON.stringify(expected)}`;
  return null;
}

function fillConfigIds(items: ConfigItem[], runnerId: string): ConfigItem[] {
  return items.map((item, index) => (item.id ? item : { ...item, id: `${runnerId}.${item.name || index}` }));
}

function nonEmptyI18n(value: Record<string, string> | null | undefined): Record<string, string> | null {
  return value && Object.keys(value).length > 0 ? value : null;
}

/** Builds the descriptor of one component (runner-protocol.md §2.3, lbot rules on protocol_version). */
export function buildDescriptor(manifest: PluginManifest, component: ComponentManifest, pluginDir: string): RunnerDescriptor {
  const runner_name = component.metadata.name;
  const id = formatRunnerId({ plugin_author: manifest.metadata.author, plugin_name: manifest.metadata.name, runner_name });
  const protocol_version = component.spec.protocol_version;
  const compatible = (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(protocol_version);
  return {
    id,
    source: 'plugin',
    label: nonEmptyI18n(component.metadata.label) ?? { [runner_name]: runner_name },
    description: nonEmptyI18n(component.metadata.description),
    plugin_author: manifest.metadata.author,
    plugin_name: manifest.metadata.name,
    runner_name,
    plugin_version: manifest.metadata.version,
    protocol_version,
    compatible,
    incompatible_reason: compatible
      ? null
      : `runner ${id} declares protocol_version ${JSON.stringify(protocol_version)}; this lbot supports protocol version ${SUPPORTED_PROTOCOL_VERSIONS.map((v) => JSON.stringify(v)).join(', ')}`,
    config_schema: fillConfigIds(component.spec.config, id),
    capabilities: component.spec.capabilities,
    permissions: component.spec.permissions,
    context: component.spec.context,
    plugin_dir: pluginDir,
  };
}

/** Resolves a manifest-relative directory, refusing paths that leave the plugin directory. */
function resolveInside(pluginDir: string, rel: string): string | null {
  const abs = path.resolve(pluginDir, rel);
  const back = path.relative(pluginDir, abs);
  if (back.startsWith('..') || path.isAbsolute(back)) return null;
  return abs;
}

type PluginLoad = { manifest: PluginManifest; runners: RunnerDescriptor[]; warnings: string[] };

async function loadComponents(manifest: PluginManifest, pluginDir: string, label: string): Promise<PluginLoad> {
  const runners: RunnerDescriptor[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  for (const { path: rel } of manifest.spec.components.AgentRunner?.fromDirs ?? []) {
    const dir = resolveInside(pluginDir, rel);
    if (!dir) {
      warnings.push(`${label}: skipped component dir ${JSON.stringify(rel)}: it points outside the plugin directory`);
      continue;
    }
    let files: string[];
    try {
      files = (await readdir(dir)).filter((f) => COMPONENT_EXT.test(f)).sort();
    } catch {
      warnings.push(`${label}: skipped component dir ${JSON.stringify(rel)}: no such directory`);
      continue;
    }
    for (const file of files) {
      const where = `${label}/${path.posix.join(rel, file)}`;
      const read = await readYamlFile(path.join(dir, file));
      if (!read.ok) {
        warnings.push(`${where}: skipped runner: ${read.reason}`);
        continue;
      }
      const wrongKind = kindReason(read.value, 'AgentRunner', file);
      if (wrongKind) {
        warnings.push(`${where}: skipped runner: ${wrongKind}`);
        continue;
      }
      // A LangBot plugin's unknown declarations are set aside and reported, not fatal.
      const lenient = isLangbotExecution(manifest.execution) ? setAsideUnrecognized(read.value) : { doc: read.value, unrecognized: null };
      const parsed = ComponentManifestSchema.safeParse(lenient.doc);
      if (!parsed.success) {
        warnings.push(`${where}: skipped runner: ${describeIssues(parsed.error)}`);
        continue;
      }
      const name = parsed.data.metadata.name;
      if (name.includes('/')) {
        warnings.push(`${where}: skipped runner: metadata.name ${JSON.stringify(name)} must not contain "/"`);
        continue;
      }
      if (seen.has(name)) {
        warnings.push(`${where}: skipped runner: another component already declares metadata.name ${JSON.stringify(name)}`);
        continue;
      }
      seen.add(name);
      const descriptor = buildDescriptor(manifest, parsed.data, pluginDir);
      if (lenient.unrecognized) {
        descriptor.unrecognized = lenient.unrecognized;
        warnings.push(`${where}: ${unrecognizedNote(lenient.unrecognized)}`);
      }
      if (!descriptor.compatible && descriptor.incompatible_reason) warnings.push(`${where}: ${descriptor.incompatible_reason}`);
      runners.push(descriptor);
    }
  }
  return { manifest, runners, warnings };
}

async function loadPlugin(pluginDir: string, label: string): Promise<PluginLoad | { error: string }> {
  const read = await readYamlFile(path.join(pluginDir, MANIFEST_FILE));
  if (!read.ok) return { error: read.reason };
  const wrongKind = kindReason(read.value, 'Plugin', MANIFEST_FILE);
  if (wrongKind) return { error: wrongKind };
  const parsed = PluginManifestSchema.safeParse(read.value);
  if (!parsed.success) return { error: `${MANIFEST_FILE}: ${describeIssues(parsed.error)}` };
  const { author, name } = parsed.data.metadata;
  if (author.includes('/') || name.includes('/')) return { error: `${MANIFEST_FILE}: metadata.author and metadata.name must not contain "/"` };
  return loadComponents(parsed.data, pluginDir, label);
}

/** Reads one plugin directory (for `--plugin DIR`): its runners, or one warning saying why it was skipped. */
export async function discoverPlugin(pluginDir: string): Promise<DiscoveryResult> {
  const dir = path.resolve(pluginDir);
  const result: DiscoveryResult = { runners: [], plugins: new Map(), warnings: [] };
  const loaded = await loadPlugin(dir, dir);
  if ('error' in loaded) {
    result.warnings.push(`${dir}: skipped plugin: ${loaded.error}`);
    return result;
  }
  admit(result, dir, loaded);
  return result;
}

/** Adds a loaded plugin, its runners and its warnings to a catalog. */
function admit(result: DiscoveryResult, dir: string, loaded: PluginLoad): void {
  const { manifest } = loaded;
  const identity = pluginIdentity(manifest);
  result.warnings.push(...loaded.warnings);
  result.plugins.set(identity, {
    identity,
    dir,
    execution: manifest.execution,
    network: manifest.spec.permissions.network,
    version: manifest.metadata.version,
    manifest,
  });
  result.runners.push(...loaded.runners);
}

const pluginIdentity = (manifest: PluginManifest): string => `${manifest.metadata.author}/${manifest.metadata.name}`;

/**
 * Lists every runner plugin under `pluginsDir` (each direct subdirectory holding manifest.yaml).
 * A bad plugin or component is skipped with one warning; it never hides the others.
 */
export async function discoverPlugins(pluginsDir: string): Promise<DiscoveryResult> {
  const root = path.resolve(pluginsDir);
  const result: DiscoveryResult = { runners: [], plugins: new Map(), warnings: [] };
  let entries: string[];
  try {
    entries = (await readdir(root)).sort();
  } catch {
    return result;
  }
  for (const entry of entries) {
    const dir = path.join(root, entry);
    if (!(await isDirectory(dir))) continue;
    try {
      await stat(path.join(dir, MANIFEST_FILE));
    } catch {
      continue;
    }
    const loaded = await loadPlugin(dir, dir);
    if ('error' in loaded) {
      result.warnings.push(`${dir}: skipped plugin: ${loaded.error}`);
      continue;
    }
    const identity = pluginIdentity(loaded.manifest);
    const clash = result.plugins.get(identity);
    if (clash) {
      result.warnings.push(`${dir}: skipped plugin: ${identity} is already provided by ${clash.dir}`);
      continue;
    }
    admit(result, dir, loaded);
  }
  return result;
}

/** Adds the bundled plugins to a discovered catalog; a configured plugin of the same identity wins. */
export function withBundled(configured: DiscoveryResult, bundled: DiscoveryResult): DiscoveryResult {
  const plugins = new Map(configured.plugins);
  const runners = [...configured.runners];
  for (const [identity, plugin] of bundled.plugins) {
    if (plugins.has(identity)) continue;
    plugins.set(identity, plugin);
    runners.push(...bundled.runners.filter((r) => `${r.plugin_author}/${r.plugin_name}` === identity));
  }
  return { runners, plugins, warnings: [...configured.warnings, ...bundled.warnings] };
}
