// The node:http transport under the provider SDKs against real loopback servers: what the SDKs rely on
// from fetch (status, headers, streamed bodies, abort, network causes) and what an upstream can do to it
// (drop the connection mid-body, send more than a slow reader takes, compress what it sends).
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { bodyCheck } from '../../../src/runtime/models/bounded-fetch.js';
import { createHttpFetch } from '../../../src/runtime/models/http-transport.js';

/** The transport without body caps. */
const httpFetch = createHttpFetch();

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;
const servers: http.Server[] = [];

async function serve(handler: Handler): Promise<{ url: string; server: http.Server; connections: Socket[] }> {
  const connections: Socket[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => handler(req, res, body));
  });
  server.on('connection', (s: Socket) => connections.push(s));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, connections };
}

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

const causeOf = (err: unknown): Record<string, unknown> => {
  expect(err).toBeInstanceOf(TypeError);
  const cause = (err as Error).cause;
  expect(cause).toBeInstanceOf(Error);
  return { ...(cause as Error) };
};

describe('httpFetch', () => {
  it('sends method, headers and body; answers status, repeated headers and the body', async () => {
    const { url } = await serve((req, res, body) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(201, 'Made', { 'content-type': 'application/json', 'x-echo': String(req.headers['x-api-key']) });
      res.end(JSON.stringify({ method: req.method, length: req.headers['content-length'], encoding: req.headers['accept-encoding'], body }));
    });
    const res = await httpFetch(`${url}/v1/x?q=1`, { method: 'POST', headers: new Headers({ 'X-Api-Key': 'k1' }), body: '{"é":1}' });
    expect(res.status).toBe(201);
    expect(res.statusText).toBe('Made');
    expect(res.ok).toBe(true);
    expect(res.headers.get('x-echo')).toBe('k1');
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await res.json()).toEqual({ method: 'POST', length: String(Buffer.byteLength('{"é":1}')), encoding: 'gzip, deflate, br', body: '{"é":1}' });
  });

  it('decodes gzip and br bodies', async () => {
    const text = 'data: {"x":1}\n\n'.repeat(500);
    const gz = await promisify(zlib.gzip)(text);
    const br = await promisify(zlib.brotliCompress)(text);
    const { url } = await serve((req, res) => {
      const asBr = req.url === '/br';
      res.writeHead(200, { 'content-encoding': asBr ? 'br' : 'gzip' });
      res.end(asBr ? br : gz);
    });
    expect(await (await httpFetch(`${url}/gz`)).text()).toBe(text);
    expect(await (await httpFetch(`${url}/br`)).text()).toBe(text);
  });

  it('keeps the connection alive between calls', async () => {
    const { url, connections } = await serve((_req, res) => res.end('ok'));
    for (let i = 0; i < 3; i++) expect(await (await httpFetch(url, { method: 'POST', body: 'x' })).text()).toBe('ok');
    expect(connections).toHaveLength(1);
  });

  it('a refused connection fails as fetch does: TypeError with the system error and its address as the cause', async () => {
    const probe = createNetServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const err: unknown = await httpFetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    expect(causeOf(err)).toMatchObject({ code: 'ECONNREFUSED', address: '127.0.0.1', port });
  });

  it('abort before the answer rejects with the AbortError and closes the connection', async () => {
    const { url, connections } = await serve(() => undefined);
    const ac = new AbortController();
    const pending = httpFetch(url, { signal: ac.signal });
    await expect.poll(() => connections.length).toBe(1);
    ac.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await expect.poll(() => connections[0]?.destroyed).toBe(true);
    await expect(httpFetch(url, { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('abort mid-body errors the reader and closes the upstream connection', async () => {
    const { url, connections } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n');
    });
    const ac = new AbortController();
    const res = await httpFetch(url, { signal: ac.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: 1\n\n');
    ac.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
    await expect.poll(() => connections[0]?.destroyed).toBe(true);
  });

  it('an upstream that drops the connection mid-body is an ECONNRESET on the reader, never a clean end', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const res = await httpFetch(url);
    await expect(res.text()).rejects.toMatchObject({ code: 'ECONNRESET' });
  });

  it('a slow reader holds the upstream back instead of buffering its answer', async () => {
    let backpressured = false;
    let written = 0;
    const { url } = await serve((_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 120);
      const pump = () => {
        while (written < 64 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) {
            backpressured = true;
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    const res = await httpFetch(url);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await new Promise((r) => setTimeout(r, 100));
    expect(backpressured).toBe(true);
    // Far less than the 64 MiB on offer has left the server while nothing was read.
    expect(written).toBeLessThan(16 * 1024 * 1024);
    await reader.cancel();
  });

  it('204 has no body; a streamed request body goes through the global fetch', async () => {
    const { url } = await serve((req, res, body) => {
      if (req.url === '/empty') return void res.writeHead(204).end();
      res.end(`got ${body}`);
    });
    const empty = await httpFetch(`${url}/empty`, { method: 'DELETE' });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    const body = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('streamed'));
        c.close();
      },
    });
    const res = await httpFetch(url, { method: 'POST', body, duplex: 'half' } as RequestInit);
    expect(await res.text()).toBe('got streamed');
  });

  describe("with body caps (the providers' transport)", () => {
    const capped = createHttpFetch(bodyCheck('m', { bodyBytes: 64, eventBytes: 32 }));

    it('counts an event stream per line where the bytes arrive: short events pass, one over the cap ends the body and the connection', async () => {
      const { url, connections } = await serve((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: short\n\n');
        setTimeout(() => res.write(`data: ${'x'.repeat(100)}`), 20);
      });
      const reader = ((await capped(url)).body as ReadableStream<Uint8Array>).getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: short\n\n');
      await expect(reader.read()).rejects.toMatchObject({ code: 'payload_too_large', reason: 'upstream_body_too_large' });
      await expect.poll(() => connections[0]?.destroyed).toBe(true);
    });

    it('refuses a declared length over the cap before reading it, and counts a chunked body', async () => {
      const { url, connections } = await serve((req, res) => {
        if (req.url === '/declared') return void res.writeHead(200, { 'content-length': '100' }).end('x'.repeat(100));
        res.writeHead(200);
        res.end('y'.repeat(100));
      });
      const declared = await capped(`${url}/declared`);
      await expect(declared.text()).rejects.toMatchObject({ code: 'payload_too_large' });
      await expect.poll(() => connections[0]?.destroyed).toBe(true);
      await expect((await capped(`${url}/chunked`)).text()).rejects.toMatchObject({ code: 'payload_too_large' });
    });

    it('passes a body within its declared length untouched', async () => {
      const { url } = await serve((_req, res) => res.end('z'.repeat(40)));
      expect(await (await capped(url)).text()).toBe('z'.repeat(40));
    });
  });
});
