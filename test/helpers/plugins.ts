// Test helpers for runner plugins: copy fixture runners into a temp plugins dir where `lbot/sdk`
// resolves to this repository's build, and check that spawned process groups are gone.
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const FIXTURE_RUNNERS = path.join(REPO_ROOT, 'fixtures', 'runners');
export const FIXTURE_EVENTS = path.join(REPO_ROOT, 'fixtures', 'events');

export type TempPlugins = {
  /** The temp root; holds package.json, node_modules/lbot and plugins/. */
  root: string;
  /** The plugins directory (pass as --plugins). */
  pluginsDir: string;
  /** Directory of one copied plugin. */
  dir(name: string): string;
  /** Copies one more fixture runner in, optionally under another directory name. */
  add(fixture: string, as?: string): Promise<string>;
  /** Edits a YAML file of a copied plugin in place (path relative to the plugin dir). */
  editYaml(plugin: string, file: string, edit: (doc: Record<string, unknown>) => void): Promise<void>;
  /** Removes the temp root. */
  cleanup(): Promise<void>;
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Creates a temp plugins dir with copies of the named fixture runners. `lbot/sdk` resolves through
 * a `node_modules/lbot` symlink to the repository root, so `npm run build` must have run.
 */
export async function createTempPlugins(fixtures: readonly string[] = []): Promise<TempPlugins> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'lbot-plugins-'));
  const pluginsDir = path.join(root, 'plugins');
  await mkdir(pluginsDir);
  await mkdir(path.join(root, 'node_modules'));
  await symlink(REPO_ROOT, path.join(root, 'node_modules', 'lbot'), 'dir');
  // Fixture runners are ESM `.js`; outside the repository they need a module-type package.json.
  await writeFile(path.join(root, 'package.json'), `${JSON.stringify({ private: true, type: 'module' }, null, 2)}\n`);
  const dir = (name: string): string => path.join(pluginsDir, name);
  const add = async (fixture: string, as = fixture): Promise<string> => {
    await cp(path.join(FIXTURE_RUNNERS, fixture), dir(as), { recursive: true });
    return dir(as);
  };
  for (const name of fixtures) await add(name);
  return {
    root,
    pluginsDir,
    dir,
    add,
    async editYaml(plugin, file, edit) {
      const full = path.join(dir(plugin), file);
      const doc = parseDocument(await readFile(full, 'utf8'));
      const value: unknown = doc.toJS();
      if (!isRecord(value)) throw new Error(`${full} is not a YAML mapping`);
      edit(value);
      await writeFile(full, `${JSON.stringify(value, null, 2)}\n`);
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** True when no process of group `pgid` is alive (kill(-pgid, 0) fails with ESRCH). */
export function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return false;
  } catch (err) {
    return err instanceof Error && 'code' in err && err.code === 'ESRCH';
  }
}

/** Waits until the group is gone (a killed group can take a moment to be reaped); false on timeout. */
export async function waitGroupGone(pgid: number, timeoutMs = 5000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (groupGone(pgid)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return groupGone(pgid);
}
