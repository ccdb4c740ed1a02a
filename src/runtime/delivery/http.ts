// One bounded HTTP exchange with a platform API: a timeout, no redirects, a capped answer body.
import type { OutboundRequest, PlatformAnswer } from '../../core/delivery/outbound/index.js';
import { tryParseJson } from '../../core/json.js';

/** Platform answers are small JSON objects; anything longer is cut (and then is not JSON). */
export const MAX_ANSWER_BYTES = 1024 * 1024;
export const REQUEST_TIMEOUT_MS = 15_000;

async function boundedText(res: Response): Promise<string> {
  if (!res.body) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    const buf = Buffer.from(chunk as Uint8Array);
    size += buf.length;
    if (size > MAX_ANSWER_BYTES) {
      chunks.push(buf.subarray(0, buf.length - (size - MAX_ANSWER_BYTES)));
      await res.body.cancel().catch(() => undefined);
      break;
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * One exchange, answer body included, within `timeoutMs`. One controller and one cleared timer: an
 * AbortSignal.timeout joined by AbortSignal.any stays alive with its listener until it fires.
 */
export async function exchange(req: OutboundRequest, timeoutMs = REQUEST_TIMEOUT_MS, signal?: AbortSignal): Promise<PlatformAnswer> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(new DOMException(`the platform API did not answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
  const onAbort = () => ctl.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const res = await fetch(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.method === 'GET' ? undefined : req.body,
      redirect: 'manual',
      signal: ctl.signal,
    });
    const text = await boundedText(res);
    return { status: res.status, header: (name) => res.headers.get(name), json: tryParseJson(text) ?? null, text };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
