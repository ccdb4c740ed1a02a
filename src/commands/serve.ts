// `lbot serve`: the headless host over HTTP (bearer token, 127.0.0.1 by default).
import type { Command } from 'commander';
import { z } from 'zod';
import { parseFlags } from './shared/flags.js';
import type { GetContext } from './index.js';

const ServeFlagsSchema = z.object({
  host: z.string().min(1).optional(),
  port: z.coerce.number().int().min(0).max(65535).optional(),
});

export function registerServe(program: Command, getCtx: GetContext): void {
  program
    .command('serve')
    .description('run the host headless over HTTP: POST /v1/runs, /v1/events, /v1/webhooks/:platform; result streams as NDJSON or SSE')
    .option('--host <addr>', 'listen address (default 127.0.0.1; other addresses need LBOT_API_TOKEN)')
    .option('--port <n>', 'listen port (default 8787; 0 picks a free one)')
    .addHelpText('after', '\nEvery /v1/* request needs Authorization: Bearer <token>. The token is LBOT_API_TOKEN, or a random one\nwritten to <data-dir>/serve.token (mode 0600) at start. SIGTERM or SIGINT shuts down gracefully.')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(ServeFlagsSchema, raw);
      const { startServe } = await import('../runtime/server/serve.js');
      const handle = await startServe({
        dataDir: ctx.flags.dataDir,
        pluginsDir: ctx.flags.pluginsDir,
        configFile: ctx.configFile(),
        host: flags.host,
        port: flags.port,
        warn: (m) => ctx.output.warn(m),
        ...(ctx.flags.verbose || ctx.flags.debug ? { log: (l: string) => process.stderr.write(`lbot: ${l}\n`) } : {}),
      });
      process.stderr.write(`lbot: serving on ${handle.url}${handle.tokenFile ? ` (token in ${handle.tokenFile})` : ''}\n`);
      ctx.output.line({ type: 'serve.ready', url: handle.url, port: handle.port, token_file: handle.tokenFile });
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGTERM', stop);
          process.off('SIGINT', stop);
          process.stderr.write('lbot: shutting down\n');
          handle.close().then(resolve, resolve);
        };
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
    });
}
