// `lbot dev [DIR]`: `serve` with hot reload of the plugins in DIR, and a dashboard on a TTY.
import type { Command } from 'commander';
import { z } from 'zod';
import { parseFlags } from './shared/flags.js';
import { printDevEvents, showDashboard, untilStopped } from './shared/dev-view.js';
import type { GetContext } from './shared/context.js';
import * as shapes from '../core/shapes/index.js';

const DevFlagsSchema = z.object({
  event: z.string().min(1).optional(),
  runner: z.string().min(1).optional(),
  config: z.string().min(1).optional(),
  host: z.string().min(1).optional(),
  port: z.coerce.number().int().min(0).max(65535).optional(),
  watch: z.boolean().default(true),
  debounce: z.coerce.number().int().nonnegative().optional(),
});

export function registerDev(program: Command, getCtx: GetContext): void {
  program
    .command('dev [dir]')
    .description('serve the runner plugins in DIR (a plugins dir, or one plugin dir) warm, and reload them when their code or YAML changes')
    .option('--event <file>', 'event file to run at start and on r (re-run)')
    .option('--runner <id>', 'runner for the event (default: a matching binding, else the only or default runner)')
    .option('--config <file>', 'runner config JSON for those runs (re-read on every run)')
    .option('--host <addr>', 'listen address (default 127.0.0.1)')
    .option('--port <n>', 'listen port (default 8787; 0 picks a free one)')
    .option('--no-watch', 'do not watch the files (reload only by restarting)')
    .option('--debounce <ms>', 'quiet time before a burst of file changes triggers one reload (default 40)')
    .addHelpText(
      'after',
      '\nKeys on a TTY: r re-run the last event, e pick another event file, q quit.\nOff a TTY it prints one line per reload, run and result (NDJSON with --json).\nA broken edit keeps the last good version serving; `lbot runner list` shows its reload_error.',
    )
    .action(async (dir: string | undefined, raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(DevFlagsSchema, raw);
      const { startDev } = await import('../runtime/dev/session.js');
      const session = await startDev({
        dataDir: ctx.flags.dataDir,
        dir: dir ?? ctx.flags.pluginsDir,
        configFile: ctx.configFile(),
        host: flags.host,
        port: flags.port,
        watch: flags.watch,
        debounceMs: flags.debounce,
        eventFile: flags.event,
        runner: flags.runner,
        runnerConfigFile: flags.config,
        warn: (m) => ctx.output.warn(m),
      });
      ctx.output.stream(shapes.ServeLine, { type: 'serve.ready', url: session.url, port: session.serve.port, token_file: session.serve.tokenFile, dev: true });
      const stop = untilStopped(ctx.signal);
      const tty = process.stdout.isTTY === true && process.stdin.isTTY === true && !ctx.output.json;
      const teardown = tty ? await showDashboard(session, stop.stop) : printDevEvents(session, ctx.output);
      try {
        if (session.eventFile) void session.runEvent();
        await stop.stopped;
      } finally {
        teardown();
        await session.close();
      }
    });
}
