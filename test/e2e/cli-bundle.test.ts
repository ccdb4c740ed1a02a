// The built CLI (scripts/bundle.mjs): one CommonJS file with a V8 code cache from a training run, loaded by
// dist/bundle/cli-loader.js. A plain node must take the cache; one that refuses it must still run the CLI;
// and every package the file require()s must load without require() of ES modules, which Node.js 20 has
// by default only from 20.19 (lbot supports 20.12): an ES-only package is imported where it is used.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const ROOT = path.join(import.meta.dirname, '..', '..');
const BUNDLE = path.join(ROOT, 'dist', 'bundle');
const BIN = path.join(ROOT, 'bin', 'lbot.js');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

async function cacheUse(flags: readonly string[]): Promise<string> {
  const loader = pathToFileURL(path.join(BUNDLE, 'cli-loader.js')).href;
  const r = await execa(process.execPath, [...flags, '--input-type=module', '-e', `process.stdout.write((await import(${JSON.stringify(loader)})).cacheUse)`]);
  return r.stdout;
}

describe('the bundled CLI', () => {
  it('loads with its code cache in a plain node', async () => {
    expect(await cacheUse([])).toBe('accepted');
  });

  it('still runs when V8 refuses the cache (other node flags), compiling the code instead', async () => {
    expect(await cacheUse(['--interrupt-budget=16384'])).toBe('rejected');
    const r = await execa(process.execPath, ['--interrupt-budget=16384', BIN, '--version']);
    expect(r.stdout.trim()).toBe(VERSION);
  });

  it('require()s only packages that load without require() of ES modules', async () => {
    const code = readFileSync(path.join(BUNDLE, 'cli.cjs'), 'utf8');
    const packages = [...new Set([...code.matchAll(/\brequire\("([^".][^"]*)"\)/g)].map((m) => m[1] ?? ''))].filter((p) => !p.startsWith('node:') && p !== '');
    expect(packages).toContain('better-sqlite3');
    const script = `const failed = []; for (const p of ${JSON.stringify(packages)}) { try { require(p); } catch (err) { failed.push(p + ': ' + err.code); } } process.stdout.write(JSON.stringify(failed));`;
    const r = await execa(process.execPath, ['--no-experimental-require-module', '-e', script], { cwd: ROOT });
    expect(JSON.parse(r.stdout)).toEqual([]);
  });

  it('imports the dev dashboard, an ES module of its own, through the loader', async () => {
    const code = readFileSync(path.join(BUNDLE, 'cli.cjs'), 'utf8');
    expect(code).toContain('__lbotImport("./ui/dev-app.js")');
    expect(code).not.toMatch(/\bimport\("/);
    const dashboard = (await import(pathToFileURL(path.join(BUNDLE, 'ui', 'dev-app.js')).href)) as Record<string, unknown>;
    expect(typeof dashboard.mountDevDashboard).toBe('function');
  });
});
