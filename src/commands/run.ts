// `lbot run --event FILE`: replays recorded events into a runner and prints what it delivers.
import type { Command } from 'commander';
import { z } from 'zod';
import { messageText } from '../core/host/result-normalizer.js';
import { PlatformChoiceSchema } from '../core/gateway/types.js';
import type { Delivered } from '../core/host/result-processor.js';
import type { ObservedNotice } from '../core/stores/types.js';
import { collect, existingDir, parseFlags, parseKeyValues } from './shared/flags.js';
import { EXIT, exitCodeFor } from './shared/exit-codes.js';
import type { GetContext } from './shared/context.js';
import { deliveredLine, observedLine, summaryLine } from '../core/protocol/result-line.js';
import * as shapes from '../core/shapes/index.js';

const RunFlagsSchema = z
  .object({
    event: z.string({ message: 'is required (a JSON event file, or - for stdin)' }).min(1),
    runner: z.string().optional(),
    plugin: z.string().optional(),
    binding: z.string().optional(),
    config: z.string().optional(),
    var: z.array(z.string()).optional(),
    platform: PlatformChoiceSchema.default('auto'),
    record: z.string().min(1).optional(),
    replay: z.string().min(1).optional(),
    check: z.boolean().optional(),
  })
  .refine((f) => !(f.record && f.replay), { message: 'use either --record or --replay, not both', path: ['replay'] })
  .refine((f) => !f.check || f.replay, { message: '--check compares with a cassette: add --replay FILE', path: ['check'] });

export function registerRun(program: Command, getCtx: GetContext): void {
  program
    .command('run')
    .description('replay one event (or a JSON array of events, in order) into a runner')
    .requiredOption('--event <file>', 'event envelope JSON file, or - for stdin (an array replays in order)')
    .option('--runner <id>', 'runner id plugin:author/plugin/runner (or an alias such as local-agent)')
    .option('--plugin <dir>', 'run a plugin from this directory (its only or default runner unless --runner)', existingDir('--plugin'))
    .option('--binding <file>', 'binding JSON file (resource, state and delivery policies)')
    .option('--config <file>', 'runner config JSON file; becomes ctx.config')
    .option('--platform <name>', 'the event file holds a platform payload: auto|onebot|telegram|slack|discord|lark|generic', 'auto')
    .option('--var <k=v>', 'adapter parameter (repeatable; secret-looking names are dropped)', collect)
    .option('--record <cassette>', 'write every proxy call, model/tool answer and the final results to this cassette file')
    .option('--replay <cassette>', 'answer model and tool calls from this cassette instead of the real providers')
    .option('--check', 'with --replay: fail (exit 1, with a diff) when the results differ from the recorded ones')
    .addHelpText(
      'after',
      '\nExamples:\n  lbot run --event fixtures/events/msg.json --plugin fixtures/runners/echo\n  lbot run --event seq.json --runner plugin:acme/scripted/default --config cfg.json --json',
    )
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(RunFlagsSchema, raw);
      const out = ctx.output;
      const { replayEvents } = await import('../runtime/replay.js');
      const signal = ctx.signal;
      const printed = new Set<string>();
      const onDelivered = (item: Delivered) => {
        if (out.json) {
          out.stream(shapes.StreamItem, deliveredLine(item));
        } else if (item.type === 'message.completed') {
          printed.add(item.run_id);
          out.text(messageText(item.message) ?? '');
        }
      };
      const onObserved = (run_id: string, notice: ObservedNotice) => {
        if (!out.verbose) return;
        if (out.json) out.stream(shapes.StreamItem, observedLine(run_id, notice));
        else out.notice(`observed ${notice.type} ${JSON.stringify(notice.data)}`);
      };
      const { openCassette } = await import('../runtime/cassette/open.js');
      const tape = await openCassette({ record: flags.record, replay: flags.replay });
      const result = await replayEvents({
        dataDir: ctx.flags.dataDir,
        databaseUrl: ctx.flags.store,
        pluginsDir: ctx.flags.pluginsDir,
        pluginDir: flags.plugin,
        config: tape.config(ctx.configFile().config),
        hostHooks: tape.hooks,
        eventFile: flags.event,
        platform: flags.platform,
        runner: flags.runner,
        bindingFile: flags.binding,
        configFile: flags.config,
        vars: parseKeyValues(flags.var, '--var'),
        signal,
        warn: (m) => out.warn(m),
        onDelivered,
        onObserved,
      });
      for (const o of result.outcomes) {
        if (!out.json && o.status === 'completed' && !printed.has(o.run_id) && o.reply) out.text(o.reply);
        if (o.error) out.notice(`error[${o.error.code}]: ${o.error.message}`);
        out.stream(shapes.StreamItem, summaryLine(o));
      }
      if (result.skipped > 0) {
        out.stream(shapes.StreamItem, { type: 'replay.summary', runs: result.outcomes.length, skipped: result.skipped });
        if (!out.json) out.warn(`${result.skipped} event(s) skipped after the failed run`);
      }
      await tape.finish({ check: flags.check ?? false });
      const failed = result.outcomes.find((o) => o.status !== 'completed');
      ctx.exitCode = failed
        ? failed.status === 'cancelled'
          ? EXIT.interrupted
          : exitCodeFor(failed.error?.code ?? 'unknown')
        : signal.aborted
          ? EXIT.interrupted
          : EXIT.ok;
    });
}
