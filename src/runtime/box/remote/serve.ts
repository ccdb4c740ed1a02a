// `lbot box serve`: the box service of this machine behind its HTTP API, with session reaping on a schedule.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { BoxConfig } from '../../../core/config.js';
import { LbotError } from '../../../core/errors.js';
import { isLoopbackHost, MIN_REMOTE_TOKEN_LENGTH } from '../../server/loopback.js';
import { resolveTokenFile } from '../../server/token.js';
import { createBoxService } from '../service.js';
import { buildBoxServer } from './server.js';

/** Where the deployment's token is kept when LBOT_BOX_TOKEN is not set (0600, made at the first start). */
export const BOX_TOKEN_FILE = 'box.token';

export type BoxServeOptions = {
  dataDir: string;
  config: BoxConfig;
  host: string;
  port: number;
  /** PEM files; both or neither. */
  tls?: { certFile: string; keyFile: string } | null;
  bodyLimitBytes?: number;
  env?: NodeJS.ProcessEnv;
  logger?: FastifyBaseLogger;
  warn(message: string): void;
};

export type BoxServeHandle = {
  url: string;
  port: number;
  tokenFile: string | null;
  tls: boolean;
  /** Stops accepting and closes the server; sessions stay (they outlive the server, like `lbot box exec --session`). */
  close(): Promise<void>;
};

function readPem(file: string, flag: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new LbotError('invalid_argument', `${flag} ${file} cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Beyond loopback a token from the environment must be long; plain HTTP there is allowed with a warning. */
function checkBind(opts: BoxServeOptions, token: string, fromEnv: boolean): void {
  if (isLoopbackHost(opts.host)) return;
  if (fromEnv && token.length < MIN_REMOTE_TOKEN_LENGTH) {
    throw new LbotError(
      'invalid_argument',
      `refusing to listen on ${opts.host}: LBOT_BOX_TOKEN has ${token.length} characters, a non-loopback address needs at least ${MIN_REMOTE_TOKEN_LENGTH}`,
      { details: { host: opts.host, min_length: MIN_REMOTE_TOKEN_LENGTH }, hint: 'set LBOT_BOX_TOKEN to a long random secret (e.g. `openssl rand -hex 32`)' },
    );
  }
  if (!opts.tls) {
    opts.warn(
      `serving the box API as plain HTTP on ${opts.host}: the token, commands and their output cross the network unencrypted; pass --tls-cert and --tls-key, or put a TLS-terminating proxy or a VPN in front`,
    );
  }
}

export async function startBoxServe(opts: BoxServeOptions): Promise<BoxServeHandle> {
  const env = opts.env ?? process.env;
  const tls = opts.tls ? { cert: readPem(opts.tls.certFile, '--tls-cert'), key: readPem(opts.tls.keyFile, '--tls-key') } : null;
  const { token, file } = resolveTokenFile(opts.dataDir, BOX_TOKEN_FILE, env.LBOT_BOX_TOKEN);
  checkBind(opts, token, file === null);
  const box = createBoxService({ dataDir: opts.dataDir, config: opts.config, warn: opts.warn });
  await box.reapExpired().catch((err: unknown) => opts.warn(`box reaping failed: ${String(err)}`));
  await box.cleanupOrphans({ engines: true }).catch((err: unknown) => opts.warn(`box orphan cleanup failed: ${String(err)}`));
  const reaper = box.startReaper();
  const app = buildBoxServer({
    box,
    token,
    tls,
    ...(opts.bodyLimitBytes !== undefined ? { bodyLimitBytes: opts.bodyLimitBytes } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  try {
    await app.listen({ host: opts.host, port: opts.port });
  } catch (err) {
    reaper.close();
    await app.close().catch(() => undefined);
    throw new LbotError('invalid_argument', `cannot listen on ${opts.host}:${opts.port}: ${err instanceof Error ? err.message : String(err)}`, {
      hint: 'pick another --listen port',
    });
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? (address satisfies AddressInfo).port : opts.port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  let closing: Promise<void> | undefined;
  return {
    url: `${tls ? 'https' : 'http'}://${host}:${port}`,
    port,
    tokenFile: file,
    tls: tls !== null,
    close: () =>
      (closing ??= (async () => {
        reaper.close();
        await app.close();
      })()),
  };
}
