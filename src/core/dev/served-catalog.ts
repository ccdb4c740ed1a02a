// The catalog `dev` serves: the last good version of each plugin directory. A fresh discovery replaces a
// plugin only when that plugin loaded cleanly; a broken edit keeps the old entry and becomes a reload error.
import path from 'node:path';
import type { PluginSpec, RunnerCatalog } from '../host/ports.js';
import type { RunnerDescriptor } from '../protocol/manifest.js';

/** One plugin directory as served: its start spec and its runners. */
export type PluginSlot = {
  dir: string;
  identity: string;
  plugin: Omit<PluginSpec, 'env'>;
  runners: RunnerDescriptor[];
};

/** What a fresh discovery says about one plugin directory. */
export type Verdict = { kind: 'ok'; slot: PluginSlot; notes: string[] } | { kind: 'broken'; reason: string } | { kind: 'gone' };

const belongsTo = (dir: string) => (w: string) => w.startsWith(`${dir}:`) || w.startsWith(`${dir}${path.sep}`) || w.startsWith(`${dir}/`);

/** Judges `dir` in a fresh discovery: loaded cleanly, broken (with the discovery's reason), or no plugin. */
export function judgePlugin(fresh: RunnerCatalog, dir: string): Verdict {
  const mine = fresh.warnings.filter(belongsTo(dir));
  const skipped = mine.filter((w) => w.includes(': skipped '));
  const found = [...fresh.plugins.values()].find((p) => path.resolve(p.dir) === dir);
  if (skipped.length > 0) return { kind: 'broken', reason: skipped.map((w) => w.replace(`${dir}: skipped plugin: `, '')).join('; ') };
  if (!found) return { kind: 'gone' };
  return {
    kind: 'ok',
    slot: { dir, identity: found.identity, plugin: found, runners: fresh.runners.filter((r) => path.resolve(r.plugin_dir) === dir) },
    notes: mine,
  };
}

/** Slots of a catalog, keyed by plugin directory. */
export function slotsOf(catalog: RunnerCatalog): Map<string, PluginSlot> {
  const out = new Map<string, PluginSlot>();
  for (const plugin of catalog.plugins.values()) {
    const dir = path.resolve(plugin.dir);
    out.set(dir, { dir, identity: plugin.identity, plugin, runners: catalog.runners.filter((r) => path.resolve(r.plugin_dir) === dir) });
  }
  return out;
}

/** A catalog made of slots, in directory order. */
export function catalogOf(slots: ReadonlyMap<string, PluginSlot>): RunnerCatalog {
  const ordered = [...slots.values()].sort((a, b) => a.dir.localeCompare(b.dir));
  return { runners: ordered.flatMap((s) => s.runners), plugins: new Map(ordered.map((s) => [s.identity, s.plugin])), warnings: [] };
}
