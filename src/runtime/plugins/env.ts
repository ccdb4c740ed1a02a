// The environment of a plugin process: the plugin allowlist of host variables (runtime/process/env.ts),
// the binding's non-secret env, then lbot's protocol variables (runner-protocol.md §10.8, acceptance AC-211).
import { PROTOCOL_VERSION } from '../../core/protocol/index.js';
import { childEnv } from '../process/env.js';

/** Builds the env of one plugin process; never inherits anything the allowlist does not name. */
export function buildPluginEnv(identity: string, bindingEnv: Record<string, string>, hostEnv: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return childEnv('plugin', { ...bindingEnv, LBOT_PROTOCOL_VERSION: PROTOCOL_VERSION, LBOT_PLUGIN_IDENTITY: identity }, hostEnv);
}
