// `lbot config show|get|set|unset|edit`: the effective config, and dotted keys checked against its schema.
import type { Command } from 'commander';
import { applyEnvOverrides, maskSecrets, parseValueText } from '../core/config.js';
import { allowedValues, resolveKey, setAt, unsetAt, valueAt } from '../core/config-keys.js';
import { LbotError } from '../core/errors.js';
import { firstIssue } from '../core/zod-issue.js';
import { z } from 'zod';
import type { GetContext } from './shared/context.js';
import { tolerateBrokenConfig } from './shared/broken-config.js';
import * as shapes from '../core/shapes/index.js';
import { isRecord } from '../core/json.js';

type Source = 'env' | 'file' | 'default';

function render(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

export function registerConfig(program: Command, getCtx: GetContext): void {
  const config = program.command('config').description('Show and change the configuration (lbot.config.json in the data dir)');
  config
    .command('show')
    .description('print the effective config (file, LBOT__SECTION__KEY env overrides, defaults); secrets are masked')
    .action(() => {
      const ctx = getCtx();
      const file = ctx.configFile();
      const masked = maskSecrets(file.config);
      ctx.output.item(shapes.Config, isRecord(masked) ? masked : {}, (v) => `# ${file.file}\n${JSON.stringify(v, null, 2)}`);
    });

  config
    .command('get')
    .description('print the effective value of a dotted key (e.g. box.limits.memory_mb, mcp.servers.NAME.url); secrets are masked')
    .argument('<key>', 'dotted key; list elements by position or by name/id')
    .action((key: string) => {
      const ctx = getCtx();
      const file = ctx.configFile();
      const { steps } = resolveKey(key);
      const value = valueAt(maskSecrets(file.config), steps);
      if (value === undefined) throw new LbotError('not_found', `config key '${key}' has no value`, { details: { key } });
      const raw = file.raw();
      const inFile = valueAt(raw, steps);
      const withEnv = valueAt(applyEnvOverrides(raw, process.env), steps);
      const source: Source = JSON.stringify(withEnv) !== JSON.stringify(inFile) ? 'env' : inFile !== undefined ? 'file' : 'default';
      ctx.output.item(shapes.ConfigValue, { key, value, source }, (v) => render(v.value));
    });

  config
    .command('set')
    .description('set a dotted key in the config file; VALUE is JSON when it parses (true, 3, ["a"]), else text')
    .argument('<key>', 'dotted key, e.g. plugins.isolation')
    .argument('<value>', 'the new value')
    .action(async (key: string, text: string) => {
      const ctx = getCtx();
      const { steps, schema } = resolveKey(key);
      const value = parseValueText(text);
      const checked = z.safeParse(schema, value);
      if (!checked.success) {
        throw new LbotError('invalid_argument', `config key '${key}': ${JSON.stringify(value)} is not allowed: ${firstIssue(checked.error).message}`, {
          hint: `${key} takes ${allowedValues(schema)}`,
          details: { key },
        });
      }
      const file = ctx.configFile();
      await file.update((raw) => setAt(raw, steps, key, value));
      const envName = `LBOT__${key.split('.').join('__').toUpperCase()}`;
      if (process.env[envName] !== undefined) ctx.output.warn(`${envName} is set and overrides this key while it is`);
      ctx.output.item(shapes.ConfigChange, { key, value: valueAt(maskSecrets(file.raw()), steps), file: file.file }, (v) => `${key} = ${render(v.value)}`);
    });

  config
    .command('unset')
    .description('remove a dotted key from the config file (its default applies again)')
    .argument('<key>', 'dotted key')
    .action(async (key: string) => {
      const ctx = getCtx();
      const { steps } = resolveKey(key);
      const file = ctx.configFile();
      let removed = false;
      await file.update((raw) => {
        removed = unsetAt(raw, steps);
      });
      ctx.output.item(shapes.ConfigChange, { key, removed, file: file.file }, (v) => (v.removed ? `${key} removed` : `${key} was not set`));
    });

  tolerateBrokenConfig(
    config
      .command('edit')
      .description('open the config file in $VISUAL or $EDITOR; the edit is installed only when lbot can load it (works on a broken config too)')
      .action(async () => {
        const ctx = getCtx();
        const { editConfig } = await import('../runtime/config-edit.js');
        const outcome = await editConfig(ctx.flags.dataDir);
        ctx.output.item(shapes.ConfigChange, outcome, (v) => (v.changed ? `${v.file} updated` : `${v.file} unchanged`));
      }),
  );
}
