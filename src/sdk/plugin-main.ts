// Bootstrap of an `execution.node` plugin: `node plugin-main.js <module>` imports the module's
// definePlugin default export and serves the lbot protocol on stdin/stdout.
import path from 'node:path';
import { LineWriter } from '../core/protocol/index.js';
import { bootstrapFail, channelOverflowed, loadPluginModule, prepareSdkResolution } from './bootstrap.js';
import { createPluginServer } from './server.js';
import { readProtocolLines, redirectConsoleToStderr } from './stdio.js';

async function main(): Promise<void> {
  const target = process.argv[2];
  if (!target) bootstrapFail('usage: plugin-main.js <path of the plugin module>', 2);
  // Taken before the runner's module loads: only this writer may use stdout. A run's results and its
  // next call, written in one turn, reach the host as one write.
  const sender = new LineWriter(process.stdout, { coalesce: true });
  redirectConsoleToStderr();
  const modulePath = path.resolve(target);
  prepareSdkResolution(modulePath);
  const { plugin, info } = await loadPluginModule(modulePath);

  let exiting = false;
  const exit = (): void => {
    if (exiting) return;
    exiting = true;
    server.stopAll();
    void sender.flush().then(() => process.exit(0));
  };
  const server = createPluginServer({ plugin, info, send: (m) => sender.write(m), onShutdown: exit });
  readProtocolLines(process.stdin, { onLine: (line) => server.handleLine(line), onEnd: exit, onOverflow: channelOverflowed });
}

main().catch((err: unknown) => bootstrapFail(err instanceof Error && err.stack ? err.stack : String(err)));
