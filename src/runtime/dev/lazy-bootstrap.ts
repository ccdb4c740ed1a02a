// Bootstrap of `execution.node` plugins under `lbot dev`: like sdk/plugin-main, but the runner module is
// imported when the first protocol line arrives, not at process start. A process spawned ahead of time
// (on standby) therefore loads the code as it is when the host needs it, after the edit that triggered
// the reload, with node and the SDK already warm.
import path from 'node:path';
import '../../sdk/index.js';
import { LineWriter } from '../../core/protocol/index.js';
import { bootstrapFail, channelOverflowed, loadPluginModule, prepareSdkResolution } from '../../sdk/bootstrap.js';
import { createPluginServer, type PluginServer } from '../../sdk/server.js';
import { readProtocolLines, redirectConsoleToStderr } from '../../sdk/stdio.js';

function main(): void {
  const target = process.argv[2];
  if (!target) bootstrapFail('usage: lazy-bootstrap.js <path of the plugin module>', 2);
  const sender = new LineWriter(process.stdout);
  redirectConsoleToStderr();
  const modulePath = path.resolve(target);
  prepareSdkResolution(modulePath);

  let server: PluginServer | null = null;
  let exiting = false;
  const exit = (): void => {
    if (exiting) return;
    exiting = true;
    server?.stopAll();
    void sender.flush().then(() => process.exit(0));
  };
  const load = async (): Promise<PluginServer> => {
    const { plugin, info } = await loadPluginModule(modulePath);
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
  readProtocolLines(process.stdin, {
    onLine,
    onEnd,
    onOverflow: channelOverflowed,
  });
}

main();
