// Finds the runner a binding names (runner-protocol.md §2.10): id format, existence, bound plugins, protocol version.
import { LbotError } from '../errors.js';
import { SUPPORTED_PROTOCOL_VERSIONS, type RunnerDescriptor } from '../protocol/manifest.js';
import { RUNNER_ID_FORM, parseRunnerId, pluginIdentity } from '../protocol/runner-id.js';
import type { RunnerCatalog } from './ports.js';

export function lookupRunner(catalog: RunnerCatalog, runnerId: string, boundPlugins: readonly string[] | null): RunnerDescriptor {
  const parts = parseRunnerId(runnerId);
  if (!parts) {
    throw new LbotError('runner.not_found', `runner id ${JSON.stringify(runnerId)} is not valid; expected ${RUNNER_ID_FORM}`, {
      details: { runner_id: runnerId, expected: RUNNER_ID_FORM },
    });
  }
  const descriptor = catalog.runners.find((r) => r.id === runnerId);
  if (!descriptor) {
    throw new LbotError('runner.not_found', `runner ${runnerId} not found`, {
      details: { runner_id: runnerId },
      hint: 'run `lbot runner list` to see the installed runners, or pass --plugin DIR',
    });
  }
  const identity = pluginIdentity(parts);
  if (boundPlugins !== null && !boundPlugins.includes(identity)) {
    throw new LbotError(
      'runner.not_authorized',
      `runner ${runnerId} is not authorized for this binding: plugin ${identity} is not in bound_plugins [${boundPlugins.join(', ')}]`,
      {
        details: { runner_id: runnerId, bound_plugins: [...boundPlugins] },
      },
    );
  }
  if (!descriptor.compatible) {
    const supported = SUPPORTED_PROTOCOL_VERSIONS.join(', ');
    throw new LbotError(
      'runner.protocol_error',
      `runner ${runnerId} speaks protocol version ${descriptor.protocol_version}; this host supports protocol version ${supported}`,
      {
        details: { runner_id: runnerId, protocol_version: descriptor.protocol_version, supported: [...SUPPORTED_PROTOCOL_VERSIONS] },
        hint: `set spec.protocol_version to "${supported}" in the runner's component YAML, or upgrade lbot`,
      },
    );
  }
  return descriptor;
}
