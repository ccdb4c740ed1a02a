// The environment of a plugin process: an explicit allowlist of host variables, lbot's protocol
// variables, then the binding's non-secret env (runner-protocol.md §10.8, acceptance AC-211).
import { PROTOCOL_VERSION } from '../../core/protocol/index.js';

/** Host variables a plugin may see; everything else (tokens, cloud keys, NODE_OPTIONS) stays out. */
export const ENV_ALLOWLIST = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;

/** Builds the env of one plugin process; never inherits anything not named here. */
export function buildPluginEnv(identity: string, bindingEnv: Record<string, string>, hostEnv: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ENV_ALLOWLIST) {
    const value = hostEnv[name];
    if (value !== undefined) env[name] = value;
  }
  for (const [name, value] of Object.entries(bindingEnv)) env[name] = value;
  env.LBOT_PROTOCOL_VERSION = PROTOCOL_VERSION;
  env.LBOT_PLUGIN_IDENTITY = identity;
  return env;
}
