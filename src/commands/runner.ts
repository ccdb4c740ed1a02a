// `lbot runner list|show`: the runners discovered in the plugins directory.
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import type { RunnerDescriptor } from '../core/protocol/manifest.js';
import { existingDir, parseFlags } from './shared/flags.js';
import type { GetContext } from './shared/context.js';
import * as shapes from '../core/shapes/index.js';

const label = (r: RunnerDescriptor) => r.label.en_US ?? Object.values(r.label)[0] ?? r.runner_name;

/** Returns the `runner` group so other modules can add subcommands (test, init). */
export function registerRunner(program: Command, getCtx: GetContext): Command {
  const runner = program.command('runner').description('List runners, show one, and check runner plugins');
  runner
    .command('list')
    .description('list runners (invalid plugins are skipped with one warning each)')
    .option('--plugin <dir>', 'list the runners of one plugin directory instead of the plugins dir', existingDir('--plugin'))
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ plugin: z.string().optional() }), raw);
      if (!ctx.configFile().config.plugins.enabled) {
        ctx.output.warn('runner plugins are disabled (plugins.enabled = false); no runners are listed');
        return ctx.output.list(shapes.Runner, [], () => 'no runners');
      }
      // A live `lbot dev` on the same directory answers with what it serves, and its reload errors.
      const { listRunners } = await import('../runtime/dev/dev-state.js');
      const catalog = await listRunners({ dataDir: ctx.flags.dataDir, pluginsDir: ctx.flags.pluginsDir, pluginDir: f.plugin });
      for (const w of catalog.warnings) ctx.output.warn(w);
      ctx.output.list(
        shapes.Runner,
        catalog.runners,
        (l) =>
          l
            .map(
              (r) =>
                `${r.id}  ${label(r)}${r.compatible ? '' : `  (incompatible: ${r.incompatible_reason ?? ''})`}${r.reload_error ? `  (reload error: ${r.reload_error})` : ''}`,
            )
            .join('\n') || `no runners in ${ctx.flags.pluginsDir}`,
      );
    });
  runner
    .command('show <runner_id>')
    .description('show one runner: label, protocol version, capabilities, permissions, config schema, and what its plugin process is granted')
    .action(async (id: string) => {
      const ctx = getCtx();
      const { loadCatalog } = await import('../runtime/catalog.js');
      const catalog = await loadCatalog(ctx.flags.pluginsDir);
      const found = catalog.runners.find((r) => r.id === id);
      if (!found) throw new LbotError('runner.not_found', `runner ${id} not found in ${ctx.flags.pluginsDir}`);
      // What its plugin process is granted: isolation mode, network (manifest, before any binding narrows it), limits.
      const { pluginSandboxFor } = await import('../runtime/plugins/sandbox.js');
      const config = ctx.configFile().config;
      const network = catalog.plugins.get(`${found.plugin_author}/${found.plugin_name}`)?.network === true;
      const granted = pluginSandboxFor(config, ctx.flags.dataDir, { warn: (m) => ctx.output.warn(m) }).grant(network);
      ctx.output.item(shapes.RunnerDetail, { ...found, granted });
    });
  return runner;
}
