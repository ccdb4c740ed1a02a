// Loads the plugin side's code once per process. The build makes sdk/runtime one CommonJS file
// (dist/bundle/sdk/runtime.cjs) and, next to it, the V8 code cache of that file as compiled and run under the
// plugin's node flags: loaded with that cache (commonjs-file.ts), a plugin process does not compile zod and the
// SDK again (about 24 ms of its start). The loader runs only from the bundle, where the build puts the three
// files side by side.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCommonJsFile, type CacheUse } from './commonjs-file.js';
import type * as Runtime from './runtime.js';

export type { CacheUse } from './commonjs-file.js';
export type PluginRuntime = typeof Runtime;

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCRIPT = path.join(HERE, 'runtime.cjs');

function isRuntime(value: unknown): value is PluginRuntime {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof Reflect.get(value, 'servePlugin') === 'function' &&
    typeof Reflect.get(value, 'definePlugin') === 'function'
  );
}

const loaded = loadCommonJsFile(SCRIPT, path.join(HERE, 'runtime.cache'));
if (!isRuntime(loaded.exports)) throw new Error(`${SCRIPT} is not the lbot plugin runtime: rebuild lbot (npm run build)`);

export const runtime: PluginRuntime = loaded.exports;
export const cacheUse: CacheUse = loaded.cache;

/** Writes the code cache of the runtime as this process compiled and ran it (the build runs it under the plugin's node flags). */
export function writeRuntimeCache(): number {
  return loaded.writeCache();
}
