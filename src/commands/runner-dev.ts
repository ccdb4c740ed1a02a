// `lbot runner test|init|scaffold`: the runner developer's commands, added to the `runner` group.
import type { Command } from 'commander';
import { z } from 'zod';
import { parseFlags } from './shared/flags.js';
import { EXIT } from './shared/exit-codes.js';
import type { GetContext } from './index.js';

const TestFlagsSchema = z.object({
  junit: z.string().min(1).optional(),
  strict: z.boolean().optional(),
  config: z.string().min(1).optional(),
  initTimeout: z.coerce.number().int().positive().optional(),
  probeTimeout: z.coerce.number().positive().optional(),
});

export function registerRunnerDev(runner: Command, getCtx: GetContext): void {
  runner
    .command('test <dir>')
    .description('conformance suite: load the plugin in DIR, drive it with probe events through a real host, and check it against the protocol')
    .option('--junit <file>', 'also write the report as JUnit XML')
    .option('--strict', 'warning-level findings (undeclared result types) fail too')
    .option('--config <file>', 'runner config JSON for the probe runs (for runners with required config keys)')
    .option('--init-timeout <ms>', 'how long initialize may take (default 10000)')
    .option('--probe-timeout <sec>', 'how long one probe run may take (default 10)')
    .addHelpText('after', '\nStatuses: PASS, FAIL, WARN (a warning-level failure), BLOCKED (could not be checked), N/A.\nExit 0 when nothing fails, 1 otherwise.\n\nExample:\n  lbot runner test ./my-runner --junit reports/conformance.xml')
    .action(async (dir: string, raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(TestFlagsSchema, raw);
      const { runRunnerTest } = await import('../runtime/conformance/suite.js');
      const { renderText } = await import('../core/conformance/report.js');
      const report = await runRunnerTest({
        dir,
        strict: flags.strict ?? false,
        configFile: flags.config,
        junitFile: flags.junit,
        initializeTimeoutMs: flags.initTimeout,
        probeTimeoutS: flags.probeTimeout,
        log: (l) => ctx.output.info(l),
      });
      ctx.output.result(report, renderText);
      ctx.exitCode = report.ok ? EXIT.ok : EXIT.runFailed;
    });
}
