// Rebuild on save for TypeScript runners under `lbot dev`: a plugin that executes a build output
// (`execution.node.path: dist/main.js`) next to a tsconfig.json is rebuilt with its own `tsc -p` before a
// reload whenever one of its TypeScript sources is newer than the file it executes. Compile errors become
// the reload error (file:line:column and the whole message) and nothing is emitted, so the last good
// build keeps serving.
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { z } from 'zod';
import { LbotError } from '../../core/errors.js';
import { BUILD_DIRS } from './watcher.js';

const SOURCE = /\.(?:mts|cts|ts|tsx)$/;
const SKIPPED_DIRS = new Set(['node_modules', '.git', '.lbot', 'coverage', 'dist', 'build', 'out', 'lib']);
const BUILD_TIMEOUT_MS = 120_000;

export type TsPlugin = { dir: string; executed: string };

/**
 * Whether the plugin's own files may run on the host: only when plugins run unisolated anyway. A sandboxed
 * plugin is built with the compiler next to lbot, never one from its own node_modules.
 */
export type BuildTrust = { pluginCompiler: boolean };

/** The executed file of a plugin when dev should build it: it lies in a build dir and a tsconfig.json exists. */
export function tsBuildTarget(dir: string, nodePath: string): TsPlugin | null {
  const rel = path.normalize(nodePath);
  const first = rel.split(path.sep)[0];
  if (!first || first === rel || !BUILD_DIRS.has(first)) return null;
  try {
    if (!statSync(path.join(dir, 'tsconfig.json')).isFile()) return null;
  } catch {
    return null;
  }
  return { dir, executed: path.join(dir, rel) };
}

/** The newest modification time of the plugin's TypeScript sources (0 when it has none). */
function newestSource(dir: string, depth = 0): number {
  let newest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    if (e.isDirectory()) {
      if (depth < 8 && !SKIPPED_DIRS.has(e.name) && !e.name.startsWith('.')) newest = Math.max(newest, newestSource(path.join(dir, e.name), depth + 1));
    } else if (e.isFile() && SOURCE.test(e.name) && !e.name.endsWith('.d.ts')) {
      try {
        newest = Math.max(newest, statSync(path.join(dir, e.name)).mtimeMs);
      } catch {
        // removed while we looked
      }
    }
  }
  return newest;
}

/** Whether a source is newer than the executed file (or the executed file is missing). */
export function needsBuild(p: TsPlugin): boolean {
  const sources = newestSource(p.dir);
  if (sources === 0) return false;
  try {
    return statSync(p.executed).mtimeMs < sources;
  } catch {
    return true;
  }
}

/** The plugin's TypeScript compiler (its own node_modules first, when trusted), else the one next to lbot, else null. */
export function findTsc(dir: string, trust: BuildTrust = { pluginCompiler: true }): string | null {
  for (const base of trust.pluginCompiler ? [path.join(dir, 'package.json'), import.meta.url] : [import.meta.url]) {
    try {
      return createRequire(base).resolve('typescript/bin/tsc');
    } catch {
      // not installed there
    }
  }
  return null;
}

/** `src/main.ts(3,7): error TS2322: …` → `src/main.ts:3:7: error TS2322: …`, continuation lines kept. */
export function formatTscOutput(output: string): string {
  return output
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '')
    .map((l) => l.replace(/^(.+?)\((\d+),(\d+)\): /, '$1:$2:$3: '))
    .join('\n');
}

const ShownConfigSchema = z.looseObject({ compilerOptions: z.record(z.string(), z.unknown()).optional() });

/**
 * Runs the plugin's `tsc -p tsconfig.json` in its dir, confined to it: sources under the plugin dir only
 * (`--rootDir`), output into the executed build dir only (`--outDir`, no declarations, no build info), and
 * nothing emitted on an error. A tsconfig with `outFile` is refused (it would write elsewhere). Throws
 * runner.start_failed with every diagnostic; answers false (nothing built) when no compiler is installed.
 */
export async function buildTs(p: TsPlugin, trust: BuildTrust, signal?: AbortSignal): Promise<boolean> {
  const tsc = findTsc(p.dir, trust);
  if (!tsc) return false;
  // An ES-only package, imported where it is used: the CLI's bundle is CommonJS (src/cli-loader.ts).
  const { execa } = await import('execa');
  const run = (args: string[]) =>
    execa(process.execPath, [tsc, '-p', 'tsconfig.json', ...args], {
      cwd: p.dir,
      reject: false,
      timeout: BUILD_TIMEOUT_MS,
      all: true,
      stdin: 'ignore',
      ...(signal ? { cancelSignal: signal } : {}),
    });
  const fail = (what: string) => new LbotError('runner.start_failed', `tsc failed in ${p.dir}:\n${what}`, { details: { dir: p.dir } });
  const shown = await run(['--showConfig']);
  if (shown.exitCode !== 0) throw fail(formatTscOutput(shown.all ?? '') || `exit code ${String(shown.exitCode)}`);
  const config = ShownConfigSchema.safeParse(safeJson(shown.stdout));
  if (!config.success) throw fail('tsc --showConfig did not print the effective tsconfig');
  if (config.data.compilerOptions?.outFile !== undefined || config.data.compilerOptions?.out !== undefined)
    throw fail('tsconfig.json sets outFile: lbot dev rebuilds only into the directory the plugin executes from; remove outFile (or build it yourself)');
  const options = config.data.compilerOptions ?? {};
  const inside = (d: string) => d === p.dir || d.startsWith(`${p.dir}${path.sep}`);
  const rootDir = typeof options.rootDir === 'string' ? path.resolve(p.dir, options.rootDir) : p.dir;
  const outDir = typeof options.outDir === 'string' ? path.resolve(p.dir, options.outDir) : null;
  if (!inside(rootDir)) throw fail(`tsconfig.json's rootDir ${rootDir} is outside the plugin directory`);
  if (!outDir || !inside(outDir) || outDir === p.dir) throw fail('tsconfig.json needs an outDir inside the plugin directory (e.g. "dist")');
  const r = await run([
    '--pretty',
    'false',
    '--noEmitOnError',
    '--rootDir',
    rootDir,
    '--outDir',
    outDir,
    '--declaration',
    'false',
    '--incremental',
    'false',
    '--composite',
    'false',
  ]);
  if (r.exitCode === 0) return true;
  const diagnostics = formatTscOutput(r.all ?? '');
  throw fail(`${r.timedOut ? `timed out after ${BUILD_TIMEOUT_MS / 1000}s\n` : ''}${diagnostics || `exit code ${String(r.exitCode)}`}`);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
