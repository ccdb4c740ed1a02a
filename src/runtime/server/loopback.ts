// Which listen addresses only this machine can reach, and how long a token must be beyond them.
import { isIPv4 } from 'node:net';

const LOOPBACK = new Set(['localhost', '::1', '0:0:0:0:0:0:0:1']);

/** Shortest env token accepted when a server listens beyond loopback (a 32-byte random token in hex or base64 is longer). */
export const MIN_REMOTE_TOKEN_LENGTH = 32;

/** Whether `host` only accepts connections from this machine: localhost, ::1, 127.0.0.0/8 (also IPv4-mapped). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (LOOPBACK.has(h)) return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return isIPv4(v4) && v4.startsWith('127.');
}
