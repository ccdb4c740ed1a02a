// Rebuild-on-save rules of lbot dev for TypeScript runners: which plugins are built, when a build is stale,
// and how tsc's diagnostics become a reload error.
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildTs, findTsc, formatTscOutput, needsBuild, tsBuildTarget } from '../../../src/runtime/dev/ts-build.js';

function plugin(files: Record<string, number>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-tsb-'));
  for (const [rel, mtimeS] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), '');
    utimesSync(path.join(dir, rel), mtimeS, mtimeS);
  }
  return dir;
}

describe('TypeScript rebuild on save', () => {
  it('builds a plugin that executes a build output next to a tsconfig.json, and nothing else', () => {
    const dir = plugin({ 'tsconfig.json': 1, 'src/main.ts': 1, 'dist/main.js': 1 });
    expect(tsBuildTarget(dir, 'dist/main.js')).toEqual({ dir, executed: path.join(dir, 'dist/main.js') });
    expect(tsBuildTarget(dir, 'main.js')).toBeNull();
    expect(tsBuildTarget(dir, 'src/main.js')).toBeNull();
    expect(tsBuildTarget(plugin({ 'dist/main.js': 1 }), 'dist/main.js')).toBeNull();
  });

  it('is stale when a source (not a declaration, not under node_modules or dist) is newer than the executed file', () => {
    const fresh = plugin({ 'tsconfig.json': 1, 'src/main.ts': 100, 'dist/main.js': 100 });
    expect(needsBuild({ dir: fresh, executed: path.join(fresh, 'dist/main.js') })).toBe(false);
    const edited = plugin({ 'tsconfig.json': 1, 'src/deep/util.ts': 200, 'dist/main.js': 100 });
    expect(needsBuild({ dir: edited, executed: path.join(edited, 'dist/main.js') })).toBe(true);
    const ignored = plugin({ 'tsconfig.json': 1, 'src/main.ts': 50, 'node_modules/x/index.ts': 300, 'types/x.d.ts': 300, 'dist/main.js': 100 });
    expect(needsBuild({ dir: ignored, executed: path.join(ignored, 'dist/main.js') })).toBe(false);
    const missing = plugin({ 'tsconfig.json': 1, 'src/main.ts': 50 });
    expect(needsBuild({ dir: missing, executed: path.join(missing, 'dist/main.js') })).toBe(true);
  });

  it('turns tsc diagnostics into file:line:column lines and keeps every line of the message', () => {
    const out = [
      "src/main.ts(12,7): error TS2322: Type 'number' is not assignable to type 'string'.",
      "src/lib/a.ts(3,1): error TS2345: Argument of type '{ a: number; }' is not assignable to parameter of type 'B'.",
      "  Object literal may only specify known properties, and 'a' does not exist in type 'B'.",
      '',
    ].join('\n');
    expect(formatTscOutput(out)).toBe(
      [
        "src/main.ts:12:7: error TS2322: Type 'number' is not assignable to type 'string'.",
        "src/lib/a.ts:3:1: error TS2345: Argument of type '{ a: number; }' is not assignable to parameter of type 'B'.",
        "  Object literal may only specify known properties, and 'a' does not exist in type 'B'.",
      ].join('\n'),
    );
  });
});

describe.skipIf(findTsc(process.cwd(), { pluginCompiler: false }) === null)('the confined build (skipped: no TypeScript compiler next to lbot)', () => {
  it('refuses a tsconfig that would write outside the plugin (outFile, outDir or rootDir elsewhere) before compiling', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ module: 'amd', outFile: '/tmp/elsewhere.js' }, 'sets outFile'],
      [{ outDir: '../elsewhere' }, 'needs an outDir inside the plugin directory'],
      [{ outDir: 'dist', rootDir: '..' }, 'is outside the plugin directory'],
    ];
    for (const [compilerOptions, message] of cases) {
      const dir = plugin({ 'src/main.ts': 1 });
      writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['src'] }));
      await expect(buildTs({ dir, executed: path.join(dir, 'dist/main.js') }, { pluginCompiler: false })).rejects.toThrow(message);
    }
  });
});
