// The fetch the provider SDKs use: every upstream body is counted while it is read, so a huge or endless
// answer stops at a cap instead of being buffered whole (the SDKs read a non-streamed body in one go and
// buffer a server-sent event until its line ends). A declared Content-Length over the cap is refused
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

/**
 * `body` with its bytes counted as they are read: the whole body, or the bytes since the last line end (an
 * event stream). Past the limit the stream errors and the upstream body is cancelled, which closes the
 * connection. A pull source rather than a TransformStream: one read and one enqueue per chunk, where a pipe
 * through a transform adds a queue and a promise chain per chunk of every streamed reply.
 */
function counted(body: ReadableStream<Uint8Array>, limit: number, perLine: boolean, fail: () => ApiError): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let count = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        if (perLine) {
          const end = Math.max(value.lastIndexOf(LF), value.lastIndexOf(CR));
          count = end === -1 ? count + value.length : value.length - end - 1;
        } else {
          count += value.length;
        }
        if (count > limit) {
          controller.error(fail());
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

/** A body that fails on its first read: the SDK reports it where it reads the body, and does not retry it. */
function failing(err: ApiError): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.error(err);
    },
  });
}

/** No Content-Encoding: the bytes read are the bytes declared (a compressed body can inflate past its length). */
function identity(headers: Headers): boolean {
  const encoding = (headers.get('content-encoding') ?? '').trim().toLowerCase();
  return encoding === '' || encoding === 'identity';
}

/** `fetch` whose response bodies are bounded by `limits`; errors carry `payload_too_large` (`upstream_body_too_large`). */
export function boundedFetch(model_id: string, limits: BodyLimits = DEFAULT_LIMITS, inner: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    const res = await inner(input, init);
    if (!res.body) return res;
    const eventStream = (res.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream');
    const length = res.headers.get('content-length')?.trim() ?? '';
    const declared = /^\d+$/.test(length) ? Number(length) : Number.NaN;
    let body: ReadableStream<Uint8Array>;
    if (eventStream) {
      body = counted(res.body, limits.eventBytes, true, () => tooLarge(model_id, 'event', limits.eventBytes));
    } else if (declared <= limits.bodyBytes && identity(res.headers)) {
      // HTTP/1.1 framing ends the body at its declared length (a longer one cannot be read as this body), so a
      // declared length within the cap bounds it already: the body is passed on as it is, without a copy.
      return res;
    } else if (declared > limits.bodyBytes) {
      await res.body.cancel();
      body = failing(tooLarge(model_id, `body (Content-Length ${declared})`, limits.bodyBytes));
    } else {
      body = counted(res.body, limits.bodyBytes, false, () => tooLarge(model_id, 'body', limits.bodyBytes));
    }
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
