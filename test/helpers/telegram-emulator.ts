// telegram-test-api (a third-party Telegram Bot API emulator from npm) on a free loopback port.
import net from 'node:net';
import TelegramServer from 'telegram-test-api';

export type TelegramEmulator = { server: TelegramServer; url: string; stop(): Promise<void> };

/** A free loopback port (the emulator treats port 0 as "use 9000"). */
async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const address = srv.address();
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  if (typeof address !== 'object' || !address) throw new Error('no port');
  return address.port;
}

export async function startTelegramEmulator(): Promise<TelegramEmulator> {
  const port = await freePort();
  const server = new TelegramServer({ port, host: '127.0.0.1', storeTimeout: 600 });
  await server.start();
  return { server, url: server.config.apiURL, stop: () => server.stop() };
}
