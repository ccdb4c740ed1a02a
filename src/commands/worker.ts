// `lbot worker`: runs the runs that `serve --queue` instances accepted, from the queue on PostgreSQL.
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import * as shapes from '../core/shapes/index.js';
import type { GetContext } from './shared/context.js';
import { parseFlags } from './shared/flags.js';
import { whenAborted } from './shared/interrupt.js';

const WorkerFlagsSchema = z.object({
  concurrency: z.coerce.number().int().min(1).max(256).default(4),
  lease: z.coerce.number().min(1).max(3600).default(30),
  onLost: z.enum(['retry', 'fail']).default('retry'),
  maxAttempts: z.coerce.number().int().min(1).max(100).default(3),
  logFormat: z.enum(['pretty', 'json']).optional(),
  quiet: z.boolean().optional(),
});

export function registerWorker(program: Command, getCtx: GetContext): void {
  program
    .command('worker')
    .description('run queued runs: claim the runs `serve --queue` accepted from the queue on PostgreSQL (any number of workers, any machines)')
    .option('--concurrency <n>', 'runs at once (default 4)')
    .option('--lease <seconds>', 'a worker without a heartbeat this long is dead and its runs are taken over (default 30; heartbeat every third)')
    .option('--on-lost <policy>', "a run whose worker died: retry (default; from the start, the lost attempt's records discarded) or fail (run.worker_lost)")
    .option('--max-attempts <n>', 'attempts of one run before a lost one fails instead (default 3)')
    .option('--log-format <format>', 'operator log on stderr: pretty (default on a terminal) or json')
    .option('--quiet', 'log warnings and errors only')
    .addHelpText(
      'after',
      '\nNeeds --store postgres://… or LBOT_DATABASE_URL: the same database as the serve --queue instances. Bindings,\nmodels and plugins come from this data dir and plugins dir, as for serve. SIGTERM or SIGINT stops claiming and\nlets the runs in flight end; a second signal stops at once (another worker retries them). See docs/scale.md.',
    )
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(WorkerFlagsSchema, raw);
      const url = ctx.flags.store;
      if (!url)
        throw new LbotError('invalid_argument', 'lbot worker needs the run stores on PostgreSQL', {
          hint: 'add --store postgres://… (or set LBOT_DATABASE_URL): the database the serve --queue instances use',
        });
      const [{ openLocalHost }, { startQueueWorker }, { createCommandLogger }, { startDelivery }, { boundHeapGrowth }] = await Promise.all([
        import('../runtime/local-host.js'),
        import('../runtime/queue/worker.js'),
        import('../runtime/server/logger.js'),
        import('../runtime/delivery/start.js'),
        import('../runtime/process/heap-growth.js'),
      ]);
      boundHeapGrowth();
      const logger = createCommandLogger({ logFormat: flags.logFormat, quiet: flags.quiet, verbose: ctx.flags.verbose || ctx.flags.debug });
      const warn = (m: string) => logger.warn({ event: 'warning' }, m);
      const configFile = ctx.configFile();
      const local = await openLocalHost({
        dataDir: ctx.flags.dataDir,
        databaseUrl: url,
        pluginsDir: ctx.flags.pluginsDir,
        config: configFile.config,
        warn,
        mcpMode: 'serve',
        pluginWrites: 'loop',
      });
      const delivery = startDelivery({ store: local.stores.delivery, accounts: () => configFile.config.platforms, env: process.env, warn });
      try {
        const worker = await startQueueWorker({
          url,
          local,
          config: () => configFile.config,
          concurrency: flags.concurrency,
          leaseSeconds: flags.lease,
          onLost: flags.onLost,
          maxAttempts: flags.maxAttempts,
          delivery: delivery.router,
          warn,
          log: (record, message) => logger.info(record, message),
        });
        logger.info({ event: 'worker.ready', worker_id: worker.worker_id, concurrency: flags.concurrency }, `worker ${worker.worker_id} claiming runs`);
        ctx.output.stream(shapes.WorkerLine, { type: 'worker.ready', worker_id: worker.worker_id, concurrency: flags.concurrency, lease_seconds: flags.lease });
        const ended = await Promise.race([whenAborted(ctx.signal).then(() => 'signal' as const), worker.stopped]);
        if (ended === 'lease_lost')
          throw new LbotError('run.worker_lost', `worker ${worker.worker_id} lost its lease: another worker took over its runs`, {
            hint: 'a worker must reach PostgreSQL at least once per --lease; give it a longer --lease if its machine is slow or overloaded',
          });
        logger.info({ event: 'worker.stop' }, 'stopping: letting the runs in flight end');
        await worker.close();
      } finally {
        await delivery.close();
        await local.close();
      }
      logger.info({ event: 'worker.stopped' }, 'stopped');
    });
}
