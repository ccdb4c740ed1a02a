// One platform exchange against a real local HTTP server: a stalled answer (headers sent, body never
// finished) ends at the timeout as a TimeoutError, the caller's abort ends it at once, and an answered
// exchange leaves no timer behind.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exchange } from '../../../src/runtime/delivery/http.js';

let server: http.Server;
let base = '';
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/ok') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    // Headers, then a body that never ends.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"ok":');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

it('an answered exchange returns the answer and leaves no timer', async () => {
  const before = timers();
  const answer = await exchange({ method: 'GET', url: `${base}/ok`, headers: {}, body: '' }, 60_000);
  expect(answer.status).toBe(200);
  expect(answer.json).toEqual({ ok: true });
  // No more timers than before (the worker's own may have ended meanwhile; a leak would add one).
  expect(timers()).toBeLessThanOrEqual(before);
});

it('a body that never ends fails at the timeout with a TimeoutError', async () => {
  const err = await exchange({ method: 'GET', url: `${base}/stall`, headers: {}, body: '' }, 200).catch((e: unknown) => e);
  expect(err).toMatchObject({ name: 'TimeoutError' });
});

it("the caller's abort ends the exchange and leaves no timer", async () => {
  const before = timers();
  const ctl = new AbortController();
  setTimeout(() => ctl.abort(new Error('shutting down')), 50);
  const err = await exchange({ method: 'GET', url: `${base}/stall`, headers: {}, body: '' }, 60_000, ctl.signal).catch((e: unknown) => e);
  expect(err).toMatchObject({ message: 'shutting down' });
  expect(timers()).toBe(before);
});
