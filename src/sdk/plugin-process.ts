// The two ways a plugin process serves the lbot protocol on stdin/stdout. `servePlugin` (sdk/plugin-main)
// imports the runner module at start. `serveStandby` (the `lbot dev` standby bootstrap) imports it when the
// first protocol line arrives, so a process spawned ahead of time loads the code as it is when the host needs
// it, after the edit that triggered the reload, with node and the SDK already warm.
import path from 'node:path';
import { LineWriter, type Coalesce } from '../core/protocol/index.js';
import { bootstrapFail, channelOverflowed, loadPluginModule, prepareSdkResolution, type ImportModule } from './bootstrap.js';
import { createPluginServer, type PluginServer } from './server.js';
import { readProtocolLines, redirectConsoleToStderr } from './stdio.js';

export type { ImportModule } from './bootstrap.js';

/** Takes stdout for the protocol and resolves the plugin module's path; exits when none is given. */
function prepare(target: string | undefined, usage: string, opts: { coalesce?: Coalesce }): { sender: LineWriter; modulePath: string } {
  if (!target) bootstrapFail(`usage: ${usage} <path of the plugin module>`, 2);
  // Taken before the runner's module loads: only this writer may use stdout.
  const sender = new LineWriter(process.stdout, opts);
  redirectConsoleToStderr();
  const modulePath = path.resolve(target);
  prepareSdkResolution(modulePath);
  return { sender, modulePath };
}

/** Ends the process once: the runs are stopped, then it exits when the lines already written are out. */
function exitOnce(sender: LineWriter, stopAll: () => void): () => void {
  let exiting = false;
  return () => {
    if (exiting) return;
    exiting = true;
    stopAll();
    void sender.flush().then(() => process.exit(0));
  };
}

export function servePlugin(target: string | undefined, importModule: ImportModule): void {
  serve(target, importModule).catch((err: unknown) => bootstrapFail(err instanceof Error && err.stack ? err.stack : String(err)));
}

async function serve(target: string | undefined, importModule: ImportModule): Promise<void> {
  // A run's results and its next call, written in one turn, reach the host as one write.
  const { sender, modulePath } = prepare(target, 'plugin-main.js', { coalesce: 'job' });
  const { plugin, info } = await loadPluginModule(modulePath, importModule);
  const exit = exitOnce(sender, () => server.stopAll());
  const server = createPluginServer({ plugin, info, send: (m) => sender.write(m), onShutdown: exit });
  readProtocolLines(process.stdin, { onLine: (line) => server.handleLine(line), onEnd: exit, onOverflow: channelOverflowed });
}

export function serveStandby(target: string | undefined, importModule: ImportModule): void {
  const { sender, modulePath } = prepare(target, 'lazy-bootstrap.js', {});

  let server: PluginServer | null = null;
  const exit = exitOnce(sender, () => server?.stopAll());
  const load = async (): Promise<PluginServer> => {
    const { plugin, info } = await loadPluginModule(modulePath, importModule);
    return createPluginServer({ plugin, info, send: (m) => sender.write(m), onShutdown: exit });
  };

  const queued: string[] = [];
  let loading: Promise<void> | null = null;
  const onLine = (line: string): void => {
    if (server) return server.handleLine(line);
    queued.push(line);
    loading ??= load().then((s) => {
      server = s;
      for (const l of queued.splice(0)) s.handleLine(l);
    });
  };
  const onEnd = (): void => {
    if (loading && !server) void loading.then(exit, exit);
    else exit();
  };
  readProtocolLines(process.stdin, { onLine, onEnd, onOverflow: channelOverflowed });
}
