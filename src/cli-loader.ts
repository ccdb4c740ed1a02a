// Loads the CLI (bin/lbot.js). The build makes the CLI one CommonJS file (dist/bundle/cli.cjs) and, next to
// it, the V8 code cache of that file as compiled by a training run of `lbot run` (scripts/bundle.mjs): loaded
// with that cache (sdk/commonjs-file.ts), a command does not compile lbot, zod and commander again, and no module
// graph of chunks is resolved (`lbot run` of one event 442 against 522 ms, `lbot runner list` 220 against
// 305 ms; docs/benchmarks.md).
// The file's dynamic imports (ES-only packages, the dev dashboard) come back here as `__lbotImport`: an `import()`
// of this module, which sits in the same directory.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCommonJsFile, type CacheUse } from './sdk/commonjs-file.js';

export type { CacheUse } from './sdk/commonjs-file.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCRIPT = path.join(HERE, 'cli.cjs');

export type Cli = { main(argv: string[]): Promise<void> };

function isCli(value: unknown): value is Cli {
  return typeof value === 'object' && value !== null && typeof Reflect.get(value, 'main') === 'function';
}

const loaded = loadCommonJsFile(SCRIPT, path.join(HERE, 'cli.cache'), { __lbotImport: (specifier: string): Promise<unknown> => import(specifier) });
if (!isCli(loaded.exports)) throw new Error(`${SCRIPT} is not the lbot CLI: rebuild lbot (npm run build)`);

export const cli: Cli = loaded.exports;
export const cacheUse: CacheUse = loaded.cache;

/** Runs `argv` as a command line, then writes the code cache of the CLI as this process compiled it (the build's training run). */
export async function writeCliCache(argv: string[]): Promise<number> {
  await cli.main(argv);
  return loaded.writeCache();
}
