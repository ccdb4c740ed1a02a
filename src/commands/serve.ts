// `lbot serve`: the headless host over HTTP (bearer token, 127.0.0.1 by default).
import type { Command } from 'commander';
import { z } from 'zod';
import { parseFlags } from './shared/flags.js';
import { whenAborted } from './shared/interrupt.js';
import type { GetContext } from './shared/context.js';
import * as shapes from '../core/shapes/index.js';

const ServeFlagsSchema = z.object({
  host: z.string().min(1).optional(),
  port: z.coerce.number().int().min(0).max(65535).optional(),
  dev: z.boolean().optional(),
  telegramPoll: z.boolean().optional(),
  logFormat: z.enum(['pretty', 'json']).optional(),
  quiet: z.boolean().optional(),
  discordGateway: z.boolean().optional(),
  queue: z.boolean().optional(),
});

export function registerServe(program: Command, getCtx: GetContext): void {
  const serve = program
    .command('serve')
    .description('run the host headless over HTTP: POST /v1/runs, /v1/events, /v1/webhooks/:platform; result streams as NDJSON or SSE')
    .option(
      '--host <addr>',
      'listen address (default 127.0.0.1; other addresses need an LBOT_API_TOKEN of 32+ characters, and serve plain HTTP: put TLS in front)',
    )
    .option('--port <n>', 'listen port (default 8787; 0 picks a free one)')
    .option('--telegram-poll', 'fetch Telegram updates by getUpdates long polling for every telegram platform account (no public URL needed)')
    .option('--log-format <format>', 'operator log on stderr: pretty (default on a terminal) or json (one JSON object a line; default otherwise)')
    .option('--quiet', 'log warnings and errors only (no request, run and plugin start lines)')
    .option('--discord-gateway', 'receive Discord messages over the Discord gateway (WebSocket) for every discord platform account (no public URL needed)')
    .option('--queue', 'hand accepted runs to the durable run queue on PostgreSQL (needs --store); lbot worker processes run them (docs/scale.md)')
    .option('--dev', 'hot reload: watch the plugins dir and reload a plugin when its code or YAML changes (same as lbot dev)')
    .addHelpText(
      'after',
      '\nEvery /v1/* request needs Authorization: Bearer <token>. The token is LBOT_API_TOKEN, or the one in\n<data-dir>/serve.token (mode 0600), made at the first start and kept across restarts (lbot serve token\n[--rotate]). SIGTERM or SIGINT shuts down gracefully.',
    )
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(ServeFlagsSchema, raw);
      if (flags.dev) {
        const { startDev } = await import('../runtime/dev/session.js');
        const { printDevEvents, untilStopped } = await import('./shared/dev-view.js');
        const session = await startDev({
          dataDir: ctx.flags.dataDir,
          dir: ctx.flags.pluginsDir,
          configFile: ctx.configFile(),
          host: flags.host,
          port: flags.port,
          watch: true,
          warn: (m) => ctx.output.warn(m),
        });
        ctx.output.notice(
          `serving on ${session.url} with hot reload of ${ctx.flags.pluginsDir}${session.serve.tokenFile ? ` (token in ${session.serve.tokenFile})` : ''}`,
        );
        ctx.output.stream(shapes.ServeLine, {
          type: 'serve.ready',
          url: session.url,
          port: session.serve.port,
          token_file: session.serve.tokenFile,
          dev: true,
        });
        const unsubscribe = printDevEvents(session, ctx.output);
        await untilStopped(ctx.signal).stopped;
        ctx.output.notice('shutting down');
        unsubscribe();
        await session.close();
        return;
      }
      const { startServe } = await import('../runtime/server/serve.js');
      const { createCommandLogger } = await import('../runtime/server/logger.js');
      (await import('../runtime/process/heap-growth.js')).boundHeapGrowth();
      const logger = createCommandLogger({ logFormat: flags.logFormat, quiet: flags.quiet, verbose: ctx.flags.verbose || ctx.flags.debug });
      const handle = await startServe({
        dataDir: ctx.flags.dataDir,
        databaseUrl: ctx.flags.store,
        pluginsDir: ctx.flags.pluginsDir,
        configFile: ctx.configFile(),
        host: flags.host,
        port: flags.port,
        ...(flags.telegramPoll ? { telegramPoll: true } : {}),
        ...(flags.discordGateway ? { discordGateway: true } : {}),
        ...(flags.queue ? { queue: true } : {}),
        logger,
        warn: (m) => logger.warn({ event: 'warning' }, m),
        log: (l: string) => logger.debug(l),
      });
      logger.info({ event: 'serve.ready', url: handle.url, token_file: handle.tokenFile }, `serving on ${handle.url}`);
      ctx.output.stream(shapes.ServeLine, { type: 'serve.ready', url: handle.url, port: handle.port, token_file: handle.tokenFile });
      await whenAborted(ctx.signal);
      logger.info({ event: 'serve.stop' }, 'shutting down');
      await handle
        .close()
        .catch((err: unknown) => logger.error({ event: 'serve.stop', error: err instanceof Error ? err.message : String(err) }, 'shutdown failed'));
      logger.info({ event: 'serve.stopped' }, 'stopped');
    });

  serve
    .command('token')
    .description('print the bearer token serve uses (made now when there is none); --rotate replaces it, for the next start of serve')
    .option('--rotate', 'write a new random token; clients need the new one once serve restarts')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(z.object({ rotate: z.boolean().optional() }), raw);
      const { resolveServeToken, rotateServeToken } = await import('../runtime/server/token.js');
      if (flags.rotate && process.env.LBOT_API_TOKEN) ctx.output.warn('LBOT_API_TOKEN is set: serve uses it, not the token file');
      const t = flags.rotate ? rotateServeToken(ctx.flags.dataDir) : resolveServeToken(ctx.flags.dataDir);
      if (t.file === null) ctx.output.notice('the token is LBOT_API_TOKEN (from the environment)');
      else if (flags.rotate) ctx.output.notice(`new token written to ${t.file}; restart lbot serve to use it`);
      ctx.output.item(shapes.ServeToken, { token: t.token, file: t.file, rotated: flags.rotate === true }, (v) => v.token);
    });
}
