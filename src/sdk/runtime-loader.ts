// Loads the plugin side's code once per process. The build makes sdk/runtime one CommonJS file
// (dist/bundle/sdk/runtime.cjs) and, next to it, the V8 code cache of that file as compiled and run under the
// plugin's node flags: loaded through `vm.Script` with that cache, a plugin process does not compile zod and the
// SDK again (about 24 ms of its start). A cache V8 refuses (another node, other flags) only costs that compile. The loader runs only from the bundle, where the build puts the three files side by side.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import type * as Runtime from './runtime.js';

export type PluginRuntime = typeof Runtime;

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCRIPT = path.join(HERE, 'runtime.cjs');
const CACHE = path.join(HERE, 'runtime.cache');

function isRuntime(value: unknown): value is PluginRuntime {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof Reflect.get(value, 'servePlugin') === 'function' &&
    typeof Reflect.get(value, 'definePlugin') === 'function'
  );
}

/** How the code cache fared: used, refused by V8, or not there. */
export type CacheUse = 'accepted' | 'rejected' | 'absent';

function loadScript(): { runtime: unknown; script: vm.Script; cache: CacheUse } {
  const cachedData = existsSync(CACHE) ? readFileSync(CACHE) : undefined;
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${readFileSync(SCRIPT, 'utf8')}\n})`, {
    filename: SCRIPT,
    ...(cachedData ? { cachedData } : {}),
  });
  const module = { exports: {} };
  const wrapper: unknown = script.runInThisContext();
  if (typeof wrapper !== 'function') throw new Error(`${SCRIPT} did not compile to a module wrapper`);
  wrapper.call(module.exports, module.exports, createRequire(SCRIPT), module, SCRIPT, HERE);
  return { runtime: module.exports, script, cache: cachedData === undefined ? 'absent' : script.cachedDataRejected === true ? 'rejected' : 'accepted' };
}

if (!existsSync(SCRIPT)) throw new Error(`${SCRIPT} is missing: rebuild lbot (npm run build)`);
const loaded = loadScript();
if (!isRuntime(loaded.runtime)) throw new Error(`${SCRIPT} is not the lbot plugin runtime: rebuild lbot (npm run build)`);

export const runtime: PluginRuntime = loaded.runtime;
export const cacheUse: CacheUse = loaded.cache;

/** Writes the code cache of the runtime as this process compiled and ran it (the build runs it under the plugin's node flags). */
export function writeRuntimeCache(): number {
  const data = loaded.script.createCachedData();
  writeFileSync(CACHE, data);
  return data.length;
}
