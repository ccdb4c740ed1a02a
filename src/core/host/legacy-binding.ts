// Imports a legacy pipeline-style runner config as a binding (runner-protocol.md §2.9, AC-182).
// Works on a deep copy: the input is never mutated.
import { LbotError } from '../errors.js';
import { isRecord } from '../json.js';
import { BindingSchema, type Binding } from '../protocol/binding.js';
import { isPluginRunnerId } from '../protocol/runner-id.js';
import { DEFAULT_RUNNER_ALIASES } from '../config.js';
import { isSentinel } from './runner-config.js';

function mapName(name: string): string {
  return isPluginRunnerId(name) ? name : (DEFAULT_RUNNER_ALIASES[name] ?? name);
}

/** Old block name(s) that map to a runner id. */
function legacyNamesFor(runnerId: string): string[] {
  return Object.entries(DEFAULT_RUNNER_ALIASES)
    .filter(([, id]) => id === runnerId)
    .map(([name]) => name);
}

export function migrateLegacyConfig(input: unknown, bindingId: string): Binding {
  const root = structuredClone(input);
  const ai = isRecord(root) && isRecord(root.ai) ? root.ai : null;
  const runner = ai && isRecord(ai.runner) ? ai.runner : null;
  if (!ai || !runner) throw new LbotError('invalid_argument', 'legacy config has no ai.runner block', { details: { path: ['ai', 'runner'] } });
  const raw = typeof runner.id === 'string' && runner.id ? runner.id : typeof runner.runner === 'string' && runner.runner ? runner.runner : null;
  if (!raw)
    throw new LbotError('invalid_argument', 'legacy config names no runner (ai.runner.id or ai.runner.runner)', { details: { path: ['ai', 'runner'] } });
  const runnerId = mapName(raw);
  const stored = isRecord(ai.runner_config) && isRecord(ai.runner_config[runnerId]) ? ai.runner_config[runnerId] : null;
  const legacyName = legacyNamesFor(runnerId).find((n) => isRecord(ai[n]));
  const legacyBlock = legacyName ? ai[legacyName] : null;
  const config: Record<string, unknown> = { ...(stored ?? (isRecord(legacyBlock) ? legacyBlock : {})) };
  if (runnerId === DEFAULT_RUNNER_ALIASES['local-agent']) {
    delete config['max-round'];
    if ('knowledge-base' in config) {
      const old = config['knowledge-base'];
      delete config['knowledge-base'];
      if (!('knowledge-bases' in config)) config['knowledge-bases'] = typeof old === 'string' && !isSentinel(old) ? [old] : [];
    }
  }
  return BindingSchema.parse({ binding_id: bindingId, runner_id: runnerId, runner_config: config, scope: { scope_type: 'global', scope_id: null } });
}
