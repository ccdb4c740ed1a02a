// Where lbot's own files are: the package root (package.json, dist/, runners/, templates/) found from this
// module, which runs from dist/bundle/ (the build), dist/ (tsc's output) or src/ (tests), and its version.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(import.meta.url);

function lbotPackage(dir: string): { version: string } | null {
  const file = path.join(dir, 'package.json');
  if (!existsSync(file)) return null;
  const raw: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!raw || typeof raw !== 'object' || !('name' in raw) || raw.name !== 'lbot') return null;
  return { version: 'version' in raw && typeof raw.version === 'string' ? raw.version : '0.0.0' };
}

function findPackage(): { root: string; version: string } {
  for (let dir = path.dirname(HERE); ; dir = path.dirname(dir)) {
    const pkg = lbotPackage(dir);
    if (pkg) return { root: dir, ...pkg };
    if (path.dirname(dir) === dir) throw new Error(`no lbot package.json above ${HERE}`);
  }
}

const PACKAGE = findPackage();

/** The lbot package root (no trailing separator). */
export const PACKAGE_ROOT = PACKAGE.root;
export const LBOT_VERSION = PACKAGE.version;

/** A path under the package root. */
export const packagePath = (...parts: string[]): string => path.join(PACKAGE_ROOT, ...parts);

/** The built (bundled) file of one of lbot's entry points, given by its path under src/ without extension. */
export const builtEntry = (entry: string): string => packagePath('dist', 'bundle', `${entry}.js`);

/**
 * The command that runs one of lbot's own entry scripts (`runtime/box/supervisor`): the build, or the .ts
 * source through tsx when lbot itself runs from src/ (tests).
 */
export function entryCommand(entry: string): string[] {
  if (HERE.endsWith('.ts')) return [process.execPath, '--import', 'tsx', packagePath('src', `${entry}.ts`)];
  return [process.execPath, builtEntry(entry)];
}
