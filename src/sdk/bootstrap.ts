// What both plugin bootstraps share (sdk/plugin-main and the `lbot dev` standby bootstrap): resolving
// lbot/sdk for plugins without their own copy, and loading a plugin module's definePlugin export.
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { InitializeResult } from '../core/protocol/index.js';
import { builtEntry } from '../package-root.js';
import { isPlugin, type Plugin } from './define.js';
import { readPluginInfo } from './plugin-info.js';

/** Reports a bootstrap failure on stderr (stdout belongs to the protocol) and exits. */
export function bootstrapFail(message: string, code = 1): never {
  process.stderr.write(`lbot plugin bootstrap: ${message}\n`);
  process.exit(code);
}

/** The host broke the channel's line cap: nothing after it can be trusted to be framed right. */
export function channelOverflowed(maxLineBytes: number): never {
  return bootstrapFail(`the host sent a line longer than ${maxLineBytes} bytes; the channel is corrupt`);
}

function resolvesLbot(modulePath: string): boolean {
  try {
    createRequire(modulePath).resolve('lbot/package.json');
    return true;
  } catch {
    return false;
  }
}

/** Makes `lbot/sdk` resolvable from the plugin; the hook costs a loader thread, so only when needed. */
export function prepareSdkResolution(modulePath: string): void {
  if (!resolvesLbot(modulePath)) register(pathToFileURL(builtEntry('sdk/resolve-lbot')));
}

/**
 * Imports an ES module by URL. The bootstrap entries pass their own `import()`: the plugin side's code may be
 * loaded as a script (sdk/runtime-loader), where a dynamic import of its own has no module loader to go to.
 */
export type ImportModule = (url: string) => Promise<unknown>;

/** Imports the plugin module and builds its `initialize` answer; exits with a clear message on failure. */
export async function loadPluginModule(modulePath: string, importModule: ImportModule): Promise<{ plugin: Plugin; info: InitializeResult }> {
  let mod: unknown;
  try {
    mod = await importModule(pathToFileURL(modulePath).href);
  } catch (err) {
    if (err instanceof SyntaxError) {
      // Node shows where a syntax error is (file:line, the source line and a caret under the column) only
      // when it reports the error itself: say what failed, then let it.
      process.stderr.write(`lbot plugin bootstrap: cannot load ${modulePath}: ${err.message}\n`);
      setImmediate(() => {
        throw err;
      });
      return await new Promise<never>(() => undefined);
    }
    bootstrapFail(`cannot load ${modulePath}: ${err instanceof Error && err.stack ? err.stack : String(err)}`);
  }
  const plugin: unknown = typeof mod === 'object' && mod !== null ? Reflect.get(mod, 'default') : undefined;
  if (!isPlugin(plugin)) bootstrapFail(`${modulePath} must default-export definePlugin({ runners: { … } }) from lbot/sdk`);
  return { plugin, info: await readPluginInfo(process.cwd(), plugin, process.env.LBOT_PLUGIN_IDENTITY) };
}
