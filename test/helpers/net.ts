// A TCP server on the host's 127.0.0.1 and a probe that connects to it from inside a sandbox with lbot's
// own node binary (bound read-only at /.lbot/node in every sandbox), to tell "network on" from "network off".
import { randomUUID } from 'node:crypto';
import net from 'node:net';

/** Where lbot binds its node binary inside a sandbox. */
export const SANDBOX_NODE = '/.lbot/node';

export type HostTcpServer = {
  port: number;
  /** What the server writes to each connection, so a probe proves it reached this very server. */
  token: string;
  /** How many connections the server accepted. */
  connections(): number;
  close(): Promise<void>;
};

/** Listens on the host's 127.0.0.1 (a free port), greets each connection with `token` and closes it. */
export async function hostTcpServer(): Promise<HostTcpServer> {
  const token = `host-tcp-${randomUUID()}`;
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((c) => {
    accepted++;
    sockets.add(c);
    c.on('error', () => undefined);
    c.on('close', () => sockets.delete(c));
    c.end(`${token}\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    token,
    connections: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A node script (port in argv[1]) that connects to 127.0.0.1:<port> and prints `received <greeting>`,
 * or `error <code>` (exit 1) when the connect fails. No single quotes, so it can be quoted for sh.
 */
export const CONNECT_SCRIPT = [
  'const s = require("net").connect(Number(process.argv[1]), "127.0.0.1");',
  'let got = "";',
  's.setEncoding("utf8");',
  's.on("data", (d) => { got += d; });',
  's.on("end", () => { console.log("received " + got.trim()); });',
  's.on("error", (e) => { console.log("error " + e.code); process.exitCode = 1; });',
  'setTimeout(() => { console.log("error TIMEOUT"); process.exit(1); }, 5000).unref();',
].join(' ');

/** The probe as one shell command line run with lbot's node inside the sandbox. */
export function connectCommand(port: number): string {
  return `${SANDBOX_NODE} -e '${CONNECT_SCRIPT}' ${port}`;
}

/** The probe as an argv (for `lbot box exec -- …`). */
export function connectArgv(port: number): string[] {
  return [SANDBOX_NODE, '-e', CONNECT_SCRIPT, String(port)];
}

/** What a failed connect from a sandbox without the host's network looks like. */
export const CONNECT_REFUSED = /^error (ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|EADDRNOTAVAIL)$/m;
