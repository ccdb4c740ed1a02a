// definePlugin / defineRunner and the types a runner is written against.
import type { RunContext } from '../core/protocol/index.js';
import type { RunnerApi } from './client.js';

/** The context of one run: the parsed `RunContext` plus a signal aborted on cancel or at the deadline. */
export type RunnerContext = RunContext & { readonly signal: AbortSignal };

/** One `AgentRunResult` as a runner yields it; the SDK stamps `run_id`, `sequence` and `timestamp`. */
export type RunnerResult = {
  type: string;
  data?: Record<string, unknown>;
  run_id?: string | null;
  sequence?: number | null;
  timestamp?: number | null;
};

/** A runner: an async generator of results for one run. */
export type Runner = {
  readonly run: (ctx: RunnerContext, api: RunnerApi) => AsyncIterable<RunnerResult>;
};

/** Who the plugin is, when there is no manifest.yaml to read it from. */
export type PluginInfo = { author: string; name: string; version?: string };

const PLUGIN_BRAND = Symbol.for('lbot.sdk.plugin');

/** What a plugin module default-exports. */
export type Plugin = {
  readonly [PLUGIN_BRAND]: true;
  readonly runners: Readonly<Record<string, Runner>>;
  readonly info: PluginInfo | null;
};

/**
 * Declares one runner.
 * @example
 * export const echo = defineRunner({
 *   async *run(ctx) { yield message(ctx.input.text ?? ''); yield completed(); },
 * });
 */
export function defineRunner(runner: Runner): Runner {
  if (typeof runner.run !== 'function') throw new TypeError('defineRunner: `run` must be an async generator function');
  return runner;
}

/**
 * Declares the plugin a module default-exports; runner names match the component YAMLs' `metadata.name`.
 * @example
 * export default definePlugin({ runners: { default: echo } });
 */
export function definePlugin(options: { runners: Record<string, Runner>; info?: PluginInfo }): Plugin {
  const runners: Record<string, Runner> = {};
  for (const [name, runner] of Object.entries(options.runners)) {
    if (typeof runner?.run !== 'function') throw new TypeError(`definePlugin: runner ${JSON.stringify(name)} has no run() function`);
    runners[name] = runner;
  }
  return Object.freeze({ [PLUGIN_BRAND]: true as const, runners: Object.freeze(runners), info: options.info ?? null });
}

function isObject(value: unknown): value is Record<PropertyKey, unknown> {
  return typeof value === 'object' && value !== null;
}

/** True for a value made by definePlugin, also across copies of the SDK (the brand is a global symbol). */
export function isPlugin(value: unknown): value is Plugin {
  if (!isObject(value) || value[PLUGIN_BRAND] !== true) return false;
  const runners = value.runners;
  return isObject(runners) && Object.values(runners).every((r) => isObject(r) && typeof r.run === 'function');
}
