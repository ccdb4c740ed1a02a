// `lbot runner test|init|scaffold`: the runner developer's commands, added to the `runner` group.
import { lbotInvocation } from './shared/invocation.js';
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import { parseFlags } from './shared/flags.js';
import { EXIT } from './shared/exit-codes.js';
import type { GetContext } from './shared/context.js';
import * as shapes from '../core/shapes/index.js';

const InitFlagsSchema = z.object({
  author: z.string().min(1).optional(),
  name: z.string().min(1).optional(),
  label: z.string().min(1).optional(),
  yes: z.boolean().optional(),
  link: z.boolean().default(true),
  langbot: z.boolean().optional(),
});

const TestFlagsSchema = z.object({
  junit: z.string().min(1).optional(),
  strict: z.boolean().optional(),
  agent: z.boolean().optional(),
  config: z.string().min(1).optional(),
  initTimeout: z.coerce.number().int().positive().optional(),
  probeTimeout: z.coerce.number().positive().optional(),
  isolation: z.enum(['auto', 'sandbox', 'none']).optional(),
});

export function registerRunnerDev(runner: Command, getCtx: GetContext): void {
  runner
    .command('init [dir]')
    .alias('scaffold')
    .description('create a TypeScript runner plugin (LangBot layout, lbot/sdk, unit test, README) that passes lbot runner test as is')
    .option('--author <author>', 'plugin author (first segment of the runner id)')
    .option('--name <name>', 'plugin name (default: the directory name)')
    .option('--label <label>', 'label shown in runner lists (default: the name)')
    .option('--yes', 'accept defaults for anything not given (author "local"); never prompt')
    .option('--no-link', 'do not link node_modules/lbot (and typescript) from this lbot install')
    .option('--langbot', "a Python runner on LangBot's plugin SDK (langbot-plugin) instead: runs unchanged in LangBot and lbot")
    .addHelpText(
      'after',
      '\nOn a TTY it asks for what the flags leave out; in scripts pass --author (or --yes).\n\nExample:\n  lbot runner scaffold my-runner --author acme && lbot runner test my-runner',
    )
    .action(async (dir: string | undefined, raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(InitFlagsSchema, raw);
      const { scaffoldRunner, defaultPluginName } = await import('../runtime/scaffold/scaffold.js');
      const interactive = !flags.yes && !ctx.output.json && process.stdin.isTTY === true && process.stdout.isTTY === true;
      let answers = { dir, name: flags.name, author: flags.author, label: flags.label };
      if (interactive && (!dir || !flags.author)) {
        const { promptScaffold } = await import('../runtime/scaffold/prompts.js');
        answers = await promptScaffold(answers);
      }
      if (!answers.dir) throw new LbotError('invalid_argument', 'lbot runner init needs a directory', { hint: 'lbot runner init my-runner --author you' });
      if (!answers.author && !flags.yes)
        throw new LbotError('invalid_argument', '--author is required when not asking on a TTY', { hint: 'pass --author NAME, or --yes to use "local"' });
      const result = await scaffoldRunner({
        dir: answers.dir,
        author: answers.author ?? 'local',
        name: answers.name ?? defaultPluginName(answers.dir),
        label: answers.label,
        link: flags.link,
        langbot: flags.langbot,
      });
      const lbot = lbotInvocation();
      ctx.output.item(shapes.ScaffoldedRunner, result, (r) =>
        flags.langbot
          ? [
              `created ${r.dir} (${r.runner_id})`,
              '',
              'next:',
              `  cd ${answers.dir}`,
              '  python3 -m venv .venv && .venv/bin/pip install -r requirements.txt',
              `  ${lbot} runner test .       # conformance, on the SDK in .venv`,
              `  ${lbot} dev .               # restarts the plugin on .py / .yaml changes`,
            ].join('\n')
          : [
              `created ${r.dir} (${r.runner_id})`,
              '',
              'next:',
              `  cd ${answers.dir}`,
              '  npm test                 # unit tests (SDK test helper)',
              `  ${lbot} runner test .       # protocol conformance`,
              `  ${lbot} dev .               # hot reload while you edit`,
            ].join('\n'),
      );
    });
  runner
    .command('test <dir>')
    .description('conformance suite: load the plugin in DIR, drive it with probe events through a real host, and check it against the protocol')
    .option('--junit <file>', 'also write the report as JUnit XML')
    .option('--strict', 'warning-level findings (undeclared result types) fail too')
    .option('--agent', 'also run the agent checks: a fake model asks for tools (result fed back, iteration cap, refused tool)')
    .option('--config <file>', 'runner config JSON for the probe runs (for runners with required config keys)')
    .option('--init-timeout <ms>', 'how long initialize may take (default 10000)')
    .option('--probe-timeout <sec>', 'how long one probe run may take (default 10)')
    .option('--isolation <mode>', 'auto, sandbox or none: how the plugin runs (default: plugins.isolation)')
    .addHelpText(
      'after',
      '\nStatuses: PASS, FAIL, WARN (a warning-level failure), BLOCKED (could not be checked), N/A.\nExit 0 when nothing fails, 1 otherwise.\n\nExamples:\n  lbot runner test ./my-runner --junit reports/conformance.xml\n  lbot runner test ./my-agent --agent      # a runner that calls models with tools',
    )
    .action(async (dir: string, raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(TestFlagsSchema, raw);
      const { runRunnerTest } = await import('../runtime/conformance/suite.js');
      const { renderText } = await import('../core/conformance/report.js');
      const report = await runRunnerTest({
        dir,
        strict: flags.strict ?? false,
        agent: flags.agent ?? false,
        configFile: flags.config,
        junitFile: flags.junit,
        initializeTimeoutMs: flags.initTimeout,
        probeTimeoutS: flags.probeTimeout,
        isolation: flags.isolation ?? ctx.configFile().config.plugins.isolation,
        log: (l) => ctx.output.info(l),
        warn: (m) => ctx.output.warn(m),
      });
      ctx.output.item(shapes.ConformanceReport, report, renderText);
      ctx.exitCode = report.ok ? EXIT.ok : EXIT.runFailed;
    });
}
