// Loads the CLI (bin/lbot.js). The build makes the CLI one CommonJS file (dist/bundle/cli.cjs) and, next to
// it, the V8 code cache of that file as compiled by a training run of `lbot run` (scripts/bundle.mjs): loaded
// through `vm.Script` with that cache, a command does not compile lbot, zod and commander again, and no module
// graph of chunks is resolved (`lbot run` of one event 442 against 522 ms, `lbot runner list` 220 against
// 305 ms; docs/benchmarks.md). A cache V8 refuses (another node, other flags) only costs that compile.
// The file's dynamic imports (ES-only packages, the dev dashboard) come back here as `__lbotImport`: an `import()`
// of this module, which sits in the same directory.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCRIPT = path.join(HERE, 'cli.cjs');
const CACHE = path.join(HERE, 'cli.cache');

export type Cli = { main(argv: string[]): Promise<void> };

function isCli(value: unknown): value is Cli {
  return typeof value === 'object' && value !== null && typeof Reflect.get(value, 'main') === 'function';
}

/** How the code cache fared: used, refused by V8, or not there. */
export type CacheUse = 'accepted' | 'rejected' | 'absent';

function loadScript(): { exports: unknown; script: vm.Script; cache: CacheUse } {
  if (!existsSync(SCRIPT)) throw new Error(`${SCRIPT} is missing: rebuild lbot (npm run build)`);
  const cachedData = existsSync(CACHE) ? readFileSync(CACHE) : undefined;
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname, __lbotImport) {${readFileSync(SCRIPT, 'utf8')}\n})`, {
    filename: SCRIPT,
    ...(cachedData ? { cachedData } : {}),
  });
  const module = { exports: {} };
  const wrapper: unknown = script.runInThisContext();
  if (typeof wrapper !== 'function') throw new Error(`${SCRIPT} did not compile to a module wrapper`);
  const importHere = (specifier: string): Promise<unknown> => import(specifier);
  wrapper.call(module.exports, module.exports, createRequire(SCRIPT), module, SCRIPT, HERE, importHere);
  return { exports: module.exports, script, cache: cachedData === undefined ? 'absent' : script.cachedDataRejected === true ? 'rejected' : 'accepted' };
}

const loaded = loadScript();
if (!isCli(loaded.exports)) throw new Error(`${SCRIPT} is not the lbot CLI: rebuild lbot (npm run build)`);

export const cli: Cli = loaded.exports;
export const cacheUse: CacheUse = loaded.cache;

/** Runs `argv` as a command line, then writes the code cache of the CLI as this process compiled it (the build's training run). */
export async function writeCliCache(argv: string[]): Promise<number> {
  await cli.main(argv);
  const data = loaded.script.createCachedData();
  writeFileSync(CACHE, data);
  return data.length;
}
