// The plugin launcher of a local host (`run`, `serve`): the config's sandbox and LangBot Python.
import type { Config } from '../../core/config.js';
import type { Coalesce } from '../../core/protocol/index.js';
import { createPluginLauncher, type PreparingLauncher } from './launcher.js';
import { pluginSandboxFor, type IsolationMode } from './sandbox.js';

export function createLocalLauncher(opts: {
  config: Config;
  dataDir: string;
  warn(message: string): void;
  isolation?: IsolationMode | undefined;
  pluginWrites?: Coalesce | undefined;
}): PreparingLauncher {
  return createPluginLauncher({
    coalesce: opts.pluginWrites,
    onWarning: (w) => opts.warn(w.message),
    langbotPython: opts.config.langbot.python,
    sandbox: pluginSandboxFor(opts.config, opts.dataDir, { warn: opts.warn, ...(opts.isolation ? { mode: opts.isolation } : {}) }),
  });
}
