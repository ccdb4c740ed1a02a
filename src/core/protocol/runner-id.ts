// The one parser and formatter of runner ids `plugin:<author>/<plugin>/<runner>` (runner-protocol.md §2.1).
import { z } from 'zod';

export const RUNNER_ID_PREFIX = 'plugin:';
export const RUNNER_ID_FORM = 'plugin:author/plugin/runner';

export const RunnerIdPartsSchema = z.strictObject({
  source: z.literal('plugin'),
  plugin_author: z.string().min(1),
  plugin_name: z.string().min(1),
  runner_name: z.string().min(1),
});
export type RunnerIdParts = Readonly<z.infer<typeof RunnerIdPartsSchema>>;

/** Parses a runner id; returns null when it is not of the form plugin:author/plugin/runner. */
export function parseRunnerId(id: string): RunnerIdParts | null {
  if (!id.startsWith(RUNNER_ID_PREFIX)) return null;
  const parts = id.slice(RUNNER_ID_PREFIX.length).split('/');
  if (parts.length !== 3) return null;
  const [plugin_author, plugin_name, runner_name] = parts;
  if (!plugin_author || !plugin_name || !runner_name) return null;
  return Object.freeze({ source: 'plugin' as const, plugin_author, plugin_name, runner_name });
}

/** Formats runner id parts; throws on empty parts or parts containing '/'. */
export function formatRunnerId(parts: { plugin_author: string; plugin_name: string; runner_name: string }): string {
  for (const p of [parts.plugin_author, parts.plugin_name, parts.runner_name]) {
    if (!p || p.includes('/')) throw new Error(`invalid runner id part ${JSON.stringify(p)}`);
  }
  return `${RUNNER_ID_PREFIX}${parts.plugin_author}/${parts.plugin_name}/${parts.runner_name}`;
}

/** The plugin identity `author/name` of a parsed runner id. */
export function pluginIdentity(parts: { plugin_author: string; plugin_name: string }): string {
  return `${parts.plugin_author}/${parts.plugin_name}`;
}

/** Prefix test only, as in the reference (no structural check). */
export function isPluginRunnerId(id: string): boolean {
  return id.startsWith(RUNNER_ID_PREFIX);
}

export const RunnerIdSchema = z.string().refine((s) => parseRunnerId(s) !== null, {
  message: `runner id must have the form ${RUNNER_ID_FORM}`,
});
