// The runner catalog as discovered on disk, apart from the host: `runner list|show` read it without
// loading the host, the stores or the model SDKs.
import path from 'node:path';
import { packagePath } from '../package-root.js';
import type { RunnerCatalog } from '../core/host/ports.js';
import { discoverPlugin, discoverPlugins, withBundled } from '../core/plugins/discovery.js';

/** The runners shipped with lbot (`runners/` of the package), found without configuration. */
export const BUNDLED_RUNNERS_DIR = packagePath('runners');

/**
 * Discovers the runners of a plugins dir plus the bundled ones (a plugin of the same identity in the
 * plugins dir replaces the bundled one), or of a single plugin dir alone.
 */
export async function loadCatalog(pluginsDir: string, pluginDir?: string): Promise<RunnerCatalog> {
  if (pluginDir) return discoverPlugin(pluginDir);
  if (path.resolve(pluginsDir) === BUNDLED_RUNNERS_DIR) return discoverPlugins(pluginsDir);
  const [configured, bundled] = await Promise.all([discoverPlugins(pluginsDir), discoverPlugins(BUNDLED_RUNNERS_DIR)]);
  return withBundled(configured, bundled);
}
