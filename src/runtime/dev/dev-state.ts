// `<data-dir>/dev-state.json`: what a running `lbot dev` / `serve --dev` serves and which plugins failed
// to reload, so `lbot runner list` in another shell can show `reload_error` (AC-177).
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { RunnerDescriptorSchema, type RunnerDescriptor } from '../../core/protocol/manifest.js';
import { parseJsonText } from '../../core/json-parse.js';
import { loadCatalog } from '../catalog.js';
import { processAlive } from '../process/identity.js';

export const DEV_STATE_FILE = 'dev-state.json';

export const DevPluginStateSchema = z.strictObject({
  dir: z.string(),
  identity: z.string().nullable(),
  generation: z.number().int().nonnegative(),
  reloaded_at: z.string().nullable(),
  reload_error: z.string().nullable(),
});
export type DevPluginState = z.infer<typeof DevPluginStateSchema>;

export const DevStateSchema = z.strictObject({
  version: z.literal(1),
  pid: z.number().int().positive(),
  url: z.string(),
  plugins_dir: z.string(),
  plugin_dir: z.string().nullable(),
  updated_at: z.string(),
  plugins: z.array(DevPluginStateSchema),
  runners: z.array(RunnerDescriptorSchema),
});
export type DevState = z.infer<typeof DevStateSchema>;

export const devStateFile = (dataDir: string): string => path.join(dataDir, DEV_STATE_FILE);

/** Replaces the file atomically (readers never see half a file). */
export async function writeDevState(dataDir: string, state: DevState): Promise<void> {
  const file = devStateFile(dataDir);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(state, null, 2)}\n`);
  await rename(tmp, file);
}

export async function removeDevState(dataDir: string, pid: number = process.pid): Promise<void> {
  const current = await readDevState(dataDir);
  if (current && current.pid === pid) await rm(devStateFile(dataDir), { force: true });
}

/** The state file of a dev session that is still running; null when absent, stale or unreadable. */
export async function readDevState(dataDir: string): Promise<DevState | null> {
  let text: string;
  try {
    text = await readFile(devStateFile(dataDir), 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = DevStateSchema.safeParse(parseJsonText(text, devStateFile(dataDir), 'invalid_argument'));
    return parsed.success && processAlive(parsed.data.pid) ? parsed.data : null;
  } catch {
    return null;
  }
}

export type RunnerRow = RunnerDescriptor & { reload_error: string | null };

/**
 * The runners `lbot runner list` shows: what a live dev session on the same directory serves (the last
 * good version, with its reload error), else what the directory holds now.
 */
export async function listRunners(opts: {
  dataDir: string;
  pluginsDir: string;
  pluginDir?: string | undefined;
}): Promise<{ runners: RunnerRow[]; warnings: string[]; dev: boolean }> {
  const state = await readDevState(opts.dataDir);
  const pluginDir = opts.pluginDir ? path.resolve(opts.pluginDir) : null;
  const matches =
    state &&
    (pluginDir
      ? state.plugin_dir === pluginDir || (state.plugin_dir === null && path.dirname(pluginDir) === state.plugins_dir)
      : state.plugin_dir === null && state.plugins_dir === path.resolve(opts.pluginsDir));
  if (state && matches) {
    const errors = new Map(state.plugins.map((p) => [p.dir, p.reload_error]));
    const runners = state.runners
      .filter((r) => !pluginDir || path.resolve(r.plugin_dir) === pluginDir)
      .map((r) => ({ ...r, reload_error: errors.get(path.resolve(r.plugin_dir)) ?? null }));
    const served = new Set(runners.map((r) => path.resolve(r.plugin_dir)));
    const warnings = state.plugins
      .filter((p) => p.reload_error && !served.has(p.dir) && (!pluginDir || p.dir === pluginDir))
      .map((p) => `${p.dir}: not served by lbot dev: ${p.reload_error ?? ''}`);
    return { runners, warnings, dev: true };
  }
  const catalog = await loadCatalog(opts.pluginsDir, opts.pluginDir);
  return { runners: catalog.runners.map((r) => ({ ...r, reload_error: null })), warnings: [...catalog.warnings], dev: false };
}
