// Runs one of the build's CommonJS files (the CLI, the plugin runtime) through `vm.Script` with the V8 code cache
// the build wrote next to it, so a process does not compile that code again. A cache V8 refuses (another node,
// other flags) only costs the compile. Used by cli-loader.ts and sdk/runtime-loader.ts.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/** How the code cache fared: used, refused by V8, or not there. */
export type CacheUse = 'accepted' | 'rejected' | 'absent';

export type CommonJsFile = {
  /** What the file put on `module.exports`. */
  exports: unknown;
  cache: CacheUse;
  /** Writes the code cache of the file as this process compiled and ran it (the build's training runs). */
  writeCache(): number;
};

/**
 * Runs `file` as a CommonJS module, its code cache read from `cacheFile`. `extra` are further parameters of the
 * module wrapper, after `__dirname` (the CLI's `__lbotImport`).
 */
export function loadCommonJsFile(file: string, cacheFile: string, extra: Record<string, unknown> = {}): CommonJsFile {
  if (!existsSync(file)) throw new Error(`${file} is missing: rebuild lbot (npm run build)`);
  const cachedData = existsSync(cacheFile) ? readFileSync(cacheFile) : undefined;
  const params = ['exports', 'require', 'module', '__filename', '__dirname', ...Object.keys(extra)].join(', ');
  const script = new vm.Script(`(function (${params}) {${readFileSync(file, 'utf8')}\n})`, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  });
  const module = { exports: {} };
  const wrapper: unknown = script.runInThisContext();
  if (typeof wrapper !== 'function') throw new Error(`${file} did not compile to a module wrapper`);
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file), ...Object.values(extra));
  return {
    exports: module.exports,
    cache: cachedData === undefined ? 'absent' : script.cachedDataRejected === true ? 'rejected' : 'accepted',
    writeCache() {
      const data = script.createCachedData();
      writeFileSync(cacheFile, data);
      return data.length;
    },
  };
}
