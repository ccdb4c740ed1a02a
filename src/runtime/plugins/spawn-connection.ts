// The one spawn path of both plugin wires: the sandbox wrap, the spawn in its own process group, the
// connection around the child and the launcher's onSpawn hook (cleanup checks see every process).
import type { PluginConnection, PluginSpec, ProxyCallHandler } from '../../core/host/ports.js';
import type { Coalesce } from '../../core/protocol/index.js';
import type { ConnectionOptions } from './connection.js';
import type { PluginWarning } from './plugin-process.js';
import type { PluginSandbox } from './sandbox.js';
import { describeCommand, spawnPlugin } from './spawn.js';

export type SpawnOptions = {
  sandbox?: PluginSandbox | undefined;
  onWarning?: ((warning: PluginWarning) => void) | undefined;
  onStderr?: ((identity: string, line: string) => void) | undefined;
  graceMs?: number | undefined;
  shutdownTimeoutMs?: number | undefined;
  onSpawn?: ((connection: PluginConnection) => void) | undefined;
  coalesce?: Coalesce | undefined;
};

/** Spawns `cmd` for `spec` (sandboxed when a sandbox is given; `show` are extra read-only paths) and wraps it with `connect`. */
export function spawnConnection<C extends PluginConnection>(
  spec: PluginSpec,
  cmd: { file: string; args: string[] },
  env: Record<string, string>,
  onApiCall: ProxyCallHandler,
  opts: SpawnOptions,
  connect: (o: ConnectionOptions) => C,
  show?: readonly string[],
): { connection: C; command: string } {
  const command = describeCommand(cmd);
  const sandbox = opts.sandbox;
  const place = { identity: spec.identity, dir: spec.dir, network: spec.network === true, ...(show ? { show: [...show] } : {}) };
  const isolate = sandbox ? (c: typeof cmd, e: Record<string, string>) => sandbox.wrap(c, place, e) : undefined;
  const { child, exitNote } = spawnPlugin(cmd, spec.dir, env, isolate);
  const onStderr = opts.onStderr;
  const connection = connect({
    identity: spec.identity,
    child,
    command,
    exitNote,
    onApiCall,
    onWarning: opts.onWarning,
    onStderr: onStderr ? (line) => onStderr(spec.identity, line) : undefined,
    graceMs: opts.graceMs,
    shutdownTimeoutMs: opts.shutdownTimeoutMs,
    coalesce: opts.coalesce,
  });
  opts.onSpawn?.(connection);
  return { connection, command };
}
