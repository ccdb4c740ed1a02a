// `lbot box serve`: this machine's box runtime over an authenticated HTTP API, for hosts on other machines.
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import * as shapes from '../core/shapes/index.js';
import { parseFlags } from './shared/flags.js';
import { whenAborted } from './shared/interrupt.js';
import type { GetContext } from './shared/context.js';

export const DEFAULT_BOX_LISTEN = '127.0.0.1:5410';

const BoxServeFlagsSchema = z.object({
  listen: z.string().min(1).default(DEFAULT_BOX_LISTEN),
  tlsCert: z.string().min(1).optional(),
  tlsKey: z.string().min(1).optional(),
  bodyLimit: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .optional(),
  logFormat: z.enum(['pretty', 'json']).optional(),
  quiet: z.boolean().optional(),
});

/** `HOST:PORT`, `[v6]:PORT` or `:PORT` (loopback) → host and port. */
export function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new LbotError('invalid_argument', `--listen expects HOST:PORT (e.g. 127.0.0.1:5410 or [::1]:5410), got ${JSON.stringify(value)}`);
  }
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

export function registerBoxServe(box: Command, getCtx: GetContext): void {
  box
    .command('serve')
    .description("serve this machine's box (exec, sessions, managed processes, file operations) to hosts on other machines over HTTP")
    .option('--listen <host:port>', `listen address (default ${DEFAULT_BOX_LISTEN}; 0 as the port picks a free one)`)
    .option('--tls-cert <file>', 'PEM certificate: serve HTTPS (with --tls-key)')
    .option('--tls-key <file>', 'PEM private key of --tls-cert')
    .option('--body-limit <bytes>', 'largest request body accepted (default 8 MiB); larger ones answer 413')
    .option('--log-format <format>', 'operator log on stderr: pretty (default on a terminal) or json')
    .option('--quiet', 'log warnings and errors only')
    .addHelpText(
      'after',
      [
        '',
        'Every /v1/box/* request needs Authorization: Bearer <token>: LBOT_BOX_TOKEN, or the one in',
        '<data-dir>/box.token (mode 0600), made at the first start. A missing or wrong token answers 401',
        '(code unauthorized) and is logged. Listening beyond loopback without --tls-cert/--tls-key warns.',
        'Hosts use it with box.remote.url = http(s)://HOST:PORT and LBOT_BOX_TOKEN (docs/box.md, "Remote box").',
        'Exit codes: 0 after SIGINT/SIGTERM, 2 for bad flags or an address it cannot listen on.',
      ].join('\n'),
    )
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const flags = parseFlags(BoxServeFlagsSchema, raw);
      const { host, port } = parseListen(flags.listen);
      if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined)) {
        throw new LbotError('invalid_argument', '--tls-cert and --tls-key go together: pass both, or neither for plain HTTP');
      }
      const { startBoxServe } = await import('../runtime/box/remote/serve.js');
      const { createCommandLogger } = await import('../runtime/server/logger.js');
      const logger = createCommandLogger({ logFormat: flags.logFormat, quiet: flags.quiet, verbose: ctx.flags.verbose || ctx.flags.debug });
      const handle = await startBoxServe({
        dataDir: ctx.flags.dataDir,
        config: ctx.configFile().config.box,
        host,
        port,
        tls: flags.tlsCert && flags.tlsKey ? { certFile: flags.tlsCert, keyFile: flags.tlsKey } : null,
        ...(flags.bodyLimit !== undefined ? { bodyLimitBytes: flags.bodyLimit } : {}),
        logger,
        warn: (m) => logger.warn({ event: 'warning' }, m),
      });
      logger.info({ event: 'box.serve.ready', url: handle.url, token_file: handle.tokenFile }, `serving the box on ${handle.url}`);
      ctx.output.stream(shapes.BoxServeLine, { type: 'box.serve.ready', url: handle.url, port: handle.port, token_file: handle.tokenFile, tls: handle.tls });
      await whenAborted(ctx.signal);
      logger.info({ event: 'box.serve.stop' }, 'shutting down');
      await handle
        .close()
        .catch((err: unknown) => logger.error({ event: 'box.serve.stop', error: err instanceof Error ? err.message : String(err) }, 'shutdown failed'));
    });
}
