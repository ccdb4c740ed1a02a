// Whether a plugin process on this machine starts from the build's V8 code cache of the plugin runtime
// (sdk/runtime-loader). A node other than the one lbot was built with refuses the cache, and every plugin
// start then compiles zod and the SDK again (about 25 ms); `lbot doctor` says so.
import { execFile } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { builtEntry } from '../../package-root.js';
import { PLUGIN_NODE_FLAGS } from './spawn.js';

const PROBE_TIMEOUT_MS = 30_000;
const CacheUseSchema = z.enum(['accepted', 'rejected', 'absent']);

export type RuntimeProbe = { ok: true; cache: z.infer<typeof CacheUseSchema> } | { ok: false; error: string };

/** Loads the plugin runtime the way a plugin process does (its node flags, no inherited env) and reports its cache. */
export function probePluginRuntime(): Promise<RuntimeProbe> {
  const loader = pathToFileURL(builtEntry('sdk/runtime-loader')).href;
  const script = `process.stdout.write((await import(${JSON.stringify(loader)})).cacheUse)`;
  return new Promise((resolve) => {
    execFile(process.execPath, [...PLUGIN_NODE_FLAGS, '--input-type=module', '-e', script], { env: {}, timeout: PROBE_TIMEOUT_MS }, (err, stdout, stderr) => {
      const cache = CacheUseSchema.safeParse(stdout);
      if (!err && cache.success) return resolve({ ok: true, cache: cache.data });
      const why =
        stderr
          .trim()
          .split('\n')
          .find((l) => /error/i.test(l)) ?? (err ? err.message : `unexpected output ${JSON.stringify(stdout.slice(0, 80))}`);
      resolve({ ok: false, error: why.slice(0, 500) });
    });
  });
}
