// `lbot binding add|list|show|rm|migrate`: bindings persisted in the config file.
import path from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { assertSafeEnv } from '../core/env-policy.js';
import { LbotError } from '../core/errors.js';
import { migrateLegacyConfig } from '../core/host/legacy-binding.js';
import { isRecord } from '../core/json.js';
import { BindingSchema, RUN_POLICIES, RunPolicySchema, type Binding } from '../core/protocol/binding.js';
import { collect, parseFlags } from './shared/flags.js';
import type { GetContext } from './shared/context.js';
import { firstIssue } from '../core/zod-issue.js';
import * as shapes from '../core/shapes/index.js';

async function readJson(file: string, flag: string): Promise<unknown> {
  return (await import('../runtime/input-files.js')).readJsonFile(file, flag);
}

function parseBinding(raw: unknown, source: string): Binding {
  const parsed = BindingSchema.safeParse(raw);
  if (parsed.success) {
    assertSafeEnv(parsed.data.env, `${source}: env`);
    return parsed.data;
  }
  const issue = firstIssue(parsed.error, '(binding)');
  throw new LbotError('invalid_argument', `${source}: ${issue.text}`, { details: { path: issue.path } });
}

const summary = (b: Binding) => `${b.binding_id}  ${b.runner_id}  [${b.event_types.join(', ')}]  run_policy ${b.run_policy}${b.enabled ? '' : '  (disabled)'}`;

export function registerBinding(program: Command, getCtx: GetContext): void {
  const binding = program.command('binding').description('Manage bindings: which runner handles which events');
  binding
    .command('add [file]')
    .description('add a binding from a JSON file (or - for stdin), or from flags')
    .option('--id <binding_id>', 'binding id')
    .option('--runner <id>', 'runner id')
    .option('--event-type <type>', 'event type it handles (repeatable)', collect)
    .option('--config <file>', 'runner config JSON file')
    .option('--run-policy <policy>', `a new event while a run of its conversation is going: ${RUN_POLICIES.join(' | ')} (default enqueue)`)
    .option('--replace', 'replace an existing binding with the same id')
    .action(async (file: string | undefined, raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(
        z.object({
          id: z.string().optional(),
          runner: z.string().optional(),
          eventType: z.array(z.string()).optional(),
          config: z.string().optional(),
          runPolicy: RunPolicySchema.optional(),
          replace: z.boolean().optional(),
        }),
        raw,
      );
      let value: unknown;
      if (file) {
        value = await readJson(file, 'binding file');
        if (f.runPolicy && isRecord(value)) value = { ...value, run_policy: f.runPolicy };
      } else {
        if (!f.id || !f.runner) throw new LbotError('invalid_argument', 'give a binding file, or both --id and --runner');
        value = {
          binding_id: f.id,
          runner_id: f.runner,
          ...(f.eventType ? { event_types: f.eventType } : {}),
          ...(f.config ? { runner_config: await readJson(f.config, '--config') } : {}),
          ...(f.runPolicy ? { run_policy: f.runPolicy } : {}),
        };
      }
      const b = parseBinding(value, file ?? 'flags');
      await ctx.configFile().update((rawConfig) => {
        const list = Array.isArray(rawConfig.bindings) ? rawConfig.bindings.filter(isRecord) : [];
        const exists = list.some((x) => x.binding_id === b.binding_id);
        if (exists && !f.replace) throw new LbotError('invalid_argument', `binding ${b.binding_id} already exists`, { hint: 'pass --replace to overwrite it' });
        rawConfig.bindings = [...list.filter((x) => x.binding_id !== b.binding_id), value];
      });
      ctx.output.item(shapes.Binding, b, (x) => `added ${summary(x)}`);
    });
  binding
    .command('list')
    .description('list bindings')
    .action(() => {
      const ctx = getCtx();
      const list = ctx.configFile().config.bindings;
      ctx.output.list(shapes.Binding, list, (l) => l.map(summary).join('\n') || 'no bindings');
    });
  binding
    .command('show <binding_id>')
    .description('show one binding with its defaults filled in')
    .action((id: string) => {
      const ctx = getCtx();
      const b = ctx.configFile().config.bindings.find((x) => x.binding_id === id);
      if (!b) throw new LbotError('binding.not_found', `binding ${id} not found`);
      ctx.output.item(shapes.Binding, b);
    });
  binding
    .command('rm <binding_id>')
    .description('remove a binding')
    .action(async (id: string) => {
      const ctx = getCtx();
      if (!ctx.configFile().config.bindings.some((x) => x.binding_id === id)) throw new LbotError('binding.not_found', `binding ${id} not found`);
      await ctx.configFile().update((rawConfig) => {
        rawConfig.bindings = (Array.isArray(rawConfig.bindings) ? rawConfig.bindings : []).filter((x) => !isRecord(x) || x.binding_id !== id);
      });
      ctx.output.item(shapes.Removed, { ok: true, removed: id }, () => `removed ${id}`);
    });
  binding
    .command('migrate <file>')
    .description('print a binding imported from a legacy pipeline-style runner config')
    .option('--id <binding_id>', 'binding id (default: the file name)')
    .action(async (file: string, raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ id: z.string().optional() }), raw);
      const b = migrateLegacyConfig(await readJson(file, 'legacy config'), f.id ?? path.basename(file).replace(/\.json$/i, ''));
      ctx.output.item(shapes.Binding, b, (x) => JSON.stringify(x, null, 2));
    });
}
