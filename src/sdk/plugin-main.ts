// Bootstrap of an `execution.node` plugin: `node plugin-main.js <module>` imports the module's
// definePlugin default export and serves the lbot protocol on stdin/stdout.
import { createRequire, register } from 'node:module';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { isPlugin } from './define.js';
import { readPluginInfo } from './plugin-info.js';
import { createPluginServer } from './server.js';
import { createLineSender, redirectConsoleToStderr } from './stdio.js';

function fail(message: string, code = 1): never {
  process.stderr.write(`lbot plugin bootstrap: ${message}\n`);
  process.exit(code);
}

function resolvesLbot(modulePath: string): boolean {
  try {
    createRequire(modulePath).resolve('lbot/package.json');
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  const target = process.argv[2];
  if (!target) fail('usage: plugin-main.js <path of the plugin module>', 2);
  // Taken before the runner's module loads: only this writer may use stdout.
  const sender = createLineSender(process.stdout);
  redirectConsoleToStderr();
  const modulePath = path.resolve(target);
  // The resolve hook costs a loader thread; only plugins without their own copy of lbot need it.
  if (!resolvesLbot(modulePath)) register('./resolve-lbot.js', import.meta.url);
  let mod: unknown;
  try {
    mod = await import(pathToFileURL(modulePath).href);
  } catch (err) {
    fail(`cannot load ${modulePath}: ${err instanceof Error && err.stack ? err.stack : String(err)}`);
  }
  const plugin: unknown = typeof mod === 'object' && mod !== null ? Reflect.get(mod, 'default') : undefined;
  if (!isPlugin(plugin)) fail(`${modulePath} must default-export definePlugin({ runners: { … } }) from lbot/sdk`);
  const info = await readPluginInfo(process.cwd(), plugin, process.env.LBOT_PLUGIN_IDENTITY);

  let exiting = false;
  const exit = (): void => {
    if (exiting) return;
    exiting = true;
    server.stopAll();
    void sender.flush().then(() => process.exit(0));
  };
  const server = createPluginServer({ plugin, info, send: (m) => sender.send(m), onShutdown: exit });
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => server.handleLine(line));
  lines.on('close', exit);
}

main().catch((err: unknown) => fail(err instanceof Error && err.stack ? err.stack : String(err)));
