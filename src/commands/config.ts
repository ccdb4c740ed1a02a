// `lbot config show`: the effective config (file + env overrides + defaults), secrets masked.
import type { Command } from 'commander';
import { maskSecrets } from '../core/config.js';
import type { GetContext } from './shared/context.js';

export function registerConfig(program: Command, getCtx: GetContext): void {
  const config = program.command('config').description('Show the effective configuration');
  config
    .command('show')
    .description('print the effective config (file, LBOT__SECTION__KEY env overrides, defaults); secrets are masked')
    .action(() => {
      const ctx = getCtx();
      const file = ctx.configFile();
      ctx.output.result(maskSecrets(file.config), (v) => `# ${file.file}\n${JSON.stringify(v, null, 2)}`);
    });
}
