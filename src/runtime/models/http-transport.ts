// The `fetch` the provider SDKs run on: node:http(s) over keep-alive agents instead of the global fetch.
// undici's WHATWG fetch builds a Request, a fetch controller and several web streams per call, about
// 0.3 ms of CPU for a small chat completion, as much as the host's own work on a model call
// (docs/benchmarks.md "The model path"). This keeps what the SDKs rely on from fetch: a Response
// with web headers and a streamed body that applies backpressure, abort through the signal
// (an AbortError), `TypeError('fetch failed')` with the system error as its cause, and gzip, deflate
// and br bodies decoded. Redirects are not followed: a provider endpoint answers where it is asked. A
// request this cannot send as it is (a streamed or form body, a Request object) goes to the global fetch.
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { checkedResponse, failingBody, type BodyCheck, type ByteCounter } from './bounded-fetch.js';

/** How long an idle keep-alive connection is kept: under the 5 s most HTTP servers close theirs after. */
const IDLE_SOCKET_MS = 4_000;

const agents = {
  'http:': new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  'https:': new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
};

function abortError(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** The headers of a request as node:http takes them, names in lower case. */
function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined) return out;
  const entries = headers instanceof Headers || Array.isArray(headers) ? headers : Object.entries(headers);
  for (const [k, v] of entries) if (v !== undefined) out[k.toLowerCase()] = String(v);
  return out;
}

/** The request body as bytes to send, null for none, or undefined for a kind left to the global fetch. */
function bodyBytes(body: RequestInit['body']): string | Uint8Array | null | undefined {
  if (body === null || body === undefined) return null;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return undefined;
}

function decoded(res: http.IncomingMessage): Readable {
  switch ((res.headers['content-encoding'] ?? '').trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      // Lenient like fetch: a body cut at a flush point still yields what it holds.
      return res.pipe(zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH }));
    case 'deflate':
      return res.pipe(zlib.createInflate({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH }));
    case 'br':
      return res.pipe(zlib.createBrotliDecompress());
    default:
      return res;
  }
}

function responseHeaders(raw: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] ?? '', raw[i + 1] ?? '');
  return headers;
}

/**
 * The body as a web stream: node's stream is paused while the reader has a chunk it has not taken, so a
 * slow consumer holds the socket back instead of buffering the upstream's answer.
 */
function webBody(res: http.IncomingMessage, signal: AbortSignal | undefined, count: ByteCounter | null): ReadableStream<Uint8Array> {
  const source = decoded(res);
  let settled = false;
  let onAbort = () => {};
  const settle = () => {
    settled = true;
    signal?.removeEventListener('abort', onAbort);
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const fail = (err: unknown) => {
          if (settled) return;
          settle();
          controller.error(err);
          res.destroy();
        };
        source.on('data', (chunk: Buffer) => {
          if (settled) return;
          const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
          // Counted here, where the bytes arrive: a web stream around this one would cost a read per chunk.
          const over = count?.(bytes);
          if (over) return fail(over);
          controller.enqueue(bytes);
          if ((controller.desiredSize ?? 0) <= 0) source.pause();
        });
        source.on('end', () => {
          if (settled) return;
          settle();
          controller.close();
        });
        source.on('error', fail);
        if (source !== res) res.on('error', fail);
        // The connection closed before the body ended: what fetch reports as `terminated`.
        res.on('close', () => {
          if (!res.complete) fail(Object.assign(new Error('terminated: the connection closed before the body ended'), { code: 'ECONNRESET' }));
        });
        onAbort = () => fail(abortError(signal));
        signal?.addEventListener('abort', onAbort, { once: true });
      },
      pull() {
        source.resume();
      },
      cancel() {
        settle();
        res.destroy();
      },
    },
    { highWaterMark: 1 },
  );
}

/**
 * `fetch` for the provider SDKs on node:http(s); see the head of this file. `check` bounds each response
 * body (bounded-fetch.ts): a refused body fails on its first read, a counted one errors once over its cap;
 * either closes the connection.
 */
export function createHttpFetch(check?: BodyCheck): typeof fetch {
  return (input, init = {}) => {
    const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? input : null;
    const agent = url?.protocol === 'http:' || url?.protocol === 'https:' ? agents[url.protocol] : undefined;
    const body = bodyBytes(init.body);
    if (!url || !agent || body === undefined)
      return check ? globalThis.fetch(input, init).then((res) => checkedResponse(res, check)) : globalThis.fetch(input, init);
    return send(url, agent, body, init, check);
  };
}

function send(url: URL, agent: http.Agent, body: string | Uint8Array | null, init: RequestInit, check: BodyCheck | undefined): Promise<Response> {
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortError(signal));
  const headers = headerRecord(init.headers);
  headers['accept-encoding'] ??= 'gzip, deflate, br';
  if (body !== null) headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  const request = url.protocol === 'https:' ? https.request : http.request;

  return new Promise<Response>((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers, agent });
    const onAbort = () => {
      req.destroy();
      reject(abortError(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(new TypeError('fetch failed', { cause: err }));
    });
    req.on('response', (res) => {
      signal?.removeEventListener('abort', onAbort);
      const status = res.statusCode ?? 0;
      const empty = init.method === 'HEAD' || status === 204 || status === 205 || status === 304;
      if (empty) res.resume();
      try {
        const answered = responseHeaders(res.rawHeaders);
        const plan = empty ? null : (check?.(answered) ?? null);
        let stream: ReadableStream<Uint8Array> | null = null;
        if (plan && 'refuse' in plan) {
          res.destroy();
          stream = failingBody(plan.refuse);
        } else if (!empty) {
          stream = webBody(res, signal, plan?.count ?? null);
        }
        resolve(new Response(stream, { status, statusText: res.statusMessage ?? '', headers: answered }));
      } catch (err) {
        res.destroy();
        reject(new TypeError('fetch failed', { cause: err }));
      }
    });
    req.end(body ?? undefined);
  });
}
