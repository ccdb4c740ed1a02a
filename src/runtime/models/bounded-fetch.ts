// The upstream body caps of the provider SDKs' fetch: every upstream body is counted while it is read, so a
// huge or endless answer stops at a cap instead of being buffered whole (the SDKs read a non-streamed body in
// one go and buffer a server-sent event until its line ends). A declared Content-Length over the cap is refused
// before a byte is read; one within the cap bounds a plain body already (HTTP/1.1 framing stops the body there),
// so that body passes untouched; without one (chunked) or compressed, the bytes themselves are counted.
import { ApiError } from '../../core/host/api-error.js';

/** The most bytes of one non-streamed upstream body: a 1,000,000-character reply JSON-escaped, or 256 wide embeddings. */
export const MAX_UPSTREAM_BODY_BYTES = 32 * 1024 * 1024;
/**
 * The most bytes of one line of an event stream (one server-sent event's data): room for a whole reply in
 * one event. Kept small because the SDKs' line decoders re-scan a growing line, quadratic in its length.
 */
export const MAX_UPSTREAM_EVENT_BYTES = 4 * 1024 * 1024;

export type BodyLimits = { bodyBytes: number; eventBytes: number };

const DEFAULT_LIMITS: BodyLimits = { bodyBytes: MAX_UPSTREAM_BODY_BYTES, eventBytes: MAX_UPSTREAM_EVENT_BYTES };

function tooLarge(model_id: string, what: string, limit: number): ApiError {
  return new ApiError('payload_too_large', `model ${model_id}: the upstream ${what} is over ${limit} bytes`, 'upstream_body_too_large', {
    model_id,
    limit,
  });
}

const LF = 0x0a;
const CR = 0x0d;

/** Counts one body's bytes as they arrive: the error to end the body with once it is over its cap, else null. */
export type ByteCounter = (chunk: Uint8Array) => ApiError | null;

/**
 * What to do with a response body, decided from its headers before a byte is read: refuse it, count it while
 * it is read, or pass it on as it is (null). The transport applies it where the bytes arrive (http-transport.ts);
 * `checkedResponse` applies it to any other fetch's Response.
 */
export type BodyCheck = (headers: Headers) => { refuse: ApiError } | { count: ByteCounter } | null;

/** The whole body, or the bytes since the last line end (an event stream), against `limit`. */
function byteCounter(limit: number, perLine: boolean, fail: () => ApiError): ByteCounter {
  let count = 0;
  return (chunk) => {
    if (perLine) {
      const end = Math.max(chunk.lastIndexOf(LF), chunk.lastIndexOf(CR));
      count = end === -1 ? count + chunk.length : chunk.length - end - 1;
    } else {
      count += chunk.length;
    }
    return count > limit ? fail() : null;
  };
}

/** No Content-Encoding: the bytes read are the bytes declared (a compressed body can inflate past its length). */
function identity(headers: Headers): boolean {
  const encoding = (headers.get('content-encoding') ?? '').trim().toLowerCase();
  return encoding === '' || encoding === 'identity';
}

/** The upstream body caps of model `model_id`; errors carry `payload_too_large` (`upstream_body_too_large`). */
export function bodyCheck(model_id: string, limits: BodyLimits = DEFAULT_LIMITS): BodyCheck {
  return (headers) => {
    if ((headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream')) {
      return { count: byteCounter(limits.eventBytes, true, () => tooLarge(model_id, 'event', limits.eventBytes)) };
    }
    const length = headers.get('content-length')?.trim() ?? '';
    const declared = /^\d+$/.test(length) ? Number(length) : Number.NaN;
    // HTTP/1.1 framing ends the body at its declared length (a longer one cannot be read as this body), so a
    // declared length within the cap bounds it already: the body is passed on as it is, without a copy.
    if (declared <= limits.bodyBytes && identity(headers)) return null;
    if (declared > limits.bodyBytes) return { refuse: tooLarge(model_id, `body (Content-Length ${declared})`, limits.bodyBytes) };
    return { count: byteCounter(limits.bodyBytes, false, () => tooLarge(model_id, 'body', limits.bodyBytes)) };
  };
}

/** A body that fails on its first read: the SDK reports it where it reads the body, and does not retry it. */
export function failingBody(err: ApiError): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.error(err);
    },
  });
}

/**
 * `body` with its bytes counted as they are read; past the cap the stream errors and the upstream body is
 * cancelled, which closes the connection. A pull source rather than a TransformStream: one read and one
 * enqueue per chunk, where a pipe through a transform adds a queue and a promise chain per chunk.
 */
function counted(body: ReadableStream<Uint8Array>, count: ByteCounter): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        const over = count(value);
        if (over) {
          controller.error(over);
          await reader.cancel().catch(() => undefined);
        } else {
          controller.enqueue(value);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/** `res` with `check` applied to its body, for a fetch that cannot count where the bytes arrive. */
export async function checkedResponse(res: Response, check: BodyCheck): Promise<Response> {
  if (!res.body) return res;
  const plan = check(res.headers);
  if (!plan) return res;
  let body: ReadableStream<Uint8Array>;
  if ('refuse' in plan) {
    await res.body.cancel();
    body = failingBody(plan.refuse);
  } else {
    body = counted(res.body, plan.count);
  }
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
