// Turns what an upstream model call threw into the AgentAPIError a runner sees: the HTTP status, the
// endpoint host (never the key) and the cause, with `retryable` set the way a caller should act on it.
import { ApiError } from '../../core/host/api-error.js';
import { isRecord } from '../../core/json.js';

/** The error classes of one official SDK (openai and @anthropic-ai/sdk share this family). */
export type SdkErrors = {
  APIError: abstract new (...args: never[]) => Error & { status: number | undefined; error: unknown };
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
  APIUserAbortError: abstract new (...args: never[]) => Error;
};

export type UpstreamTarget = { model_id: string; endpoint: string; apiKey: string | undefined };

/** Why the call stopped when lbot stopped it: the run was cancelled or its deadline passed. */
export type StopReason = 'cancelled' | 'deadline' | null;

const MAX_CAUSE = 300;

/** A stream that ended without its final event (finish_reason / message_stop): the reply is partial. */
export class StreamCutError extends Error {
  override name = 'StreamCutError';
}

export function endpointHost(endpoint: string): string {
  try {
    return new URL(endpoint).host;
  } catch {
    return endpoint.slice(0, 100);
  }
}

/** The innermost cause of a network error, as `CODE address:port` when the system reported one. */
export function networkCause(err: unknown): string {
  let cur: unknown = err;
  let last = err instanceof Error ? err.message : String(err);
  for (let depth = 0; depth < 6 && cur instanceof Error; depth++) {
    const rec: Record<string, unknown> = { ...cur };
    if (typeof rec.code === 'string' && rec.code.startsWith('E')) {
      const where = typeof rec.address === 'string' ? ` ${rec.address}${typeof rec.port === 'number' ? `:${rec.port}` : ''}` : '';
      return `${rec.code}${where}`;
    }
    if (cur.message) last = cur.message;
    cur = cur.cause;
  }
  return last;
}

/** The upstream's own words from an error body: OpenAI `{error:{message,code}}`, Anthropic `{error:{type,message}}`. */
function upstreamMessage(body: unknown): { message: string | null; code: string | null } {
  const inner = isRecord(body) && isRecord(body.error) ? body.error : isRecord(body) ? body : null;
  if (!inner) return { message: null, code: null };
  const message = typeof inner.message === 'string' ? inner.message : null;
  const code = typeof inner.code === 'string' ? inner.code : typeof inner.type === 'string' ? inner.type : null;
  return { message, code };
}

function redact(text: string, apiKey: string | undefined): string {
  const cut = text.length > MAX_CAUSE ? `${text.slice(0, MAX_CAUSE)}…` : text;
  return apiKey && apiKey.length >= 4 ? cut.split(apiKey).join('****') : cut;
}

export function toUpstreamError(err: unknown, sdk: SdkErrors, target: UpstreamTarget, stopped: StopReason): ApiError {
  if (err instanceof ApiError) return err;
  const host = endpointHost(target.endpoint);
  const base = { model_id: target.model_id, host };
  const fail = (message: string, extra: Record<string, unknown>, retryable: boolean) =>
    new ApiError(
      'runtime_error',
      redact(`model ${target.model_id} (${host}): ${message}`, target.apiKey),
      'downstream_error',
      { ...base, ...extra },
      retryable,
    );

  if (stopped === 'deadline')
    return new ApiError('deadline_exceeded', `model ${target.model_id}: the run deadline passed during the call`, 'run_deadline', base);
  if (stopped === 'cancelled' || err instanceof sdk.APIUserAbortError)
    return new ApiError('runtime_error', `model ${target.model_id}: the call was cancelled`, 'cancelled', base);
  if (err instanceof sdk.APIConnectionTimeoutError) return fail('timed out', { cause: 'timeout' }, true);
  if (err instanceof sdk.APIConnectionError) {
    const cause = redact(networkCause(err), target.apiKey);
    return fail(`connection failed: ${cause}`, { cause }, true);
  }
  if (err instanceof sdk.APIError && typeof err.status === 'number') {
    const status = err.status;
    const upstream = upstreamMessage(err.error);
    const said = upstream.message ?? err.message;
    const what = status === 401 ? 'invalid api key' : status === 404 ? 'model or endpoint not found' : status === 429 ? 'rate limited' : `HTTP ${status}`;
    const cause = redact(`${status} ${what}${said ? `: ${said}` : ''}`, target.apiKey);
    return fail(
      cause,
      { status, cause, ...(upstream.code ? { upstream_code: upstream.code } : {}) },
      status === 408 || status === 409 || status === 429 || status >= 500,
    );
  }
  if (err instanceof StreamCutError) return fail(`connection dropped mid-response: ${err.message}`, { cause: 'stream_cut' }, true);
  // Mid-stream failures surface from the body reader or the SSE parser, not as an APIError.
  if (err instanceof SyntaxError) return fail(`malformed stream chunk: ${redact(err.message, target.apiKey)}`, { cause: 'malformed_chunk' }, false);
  const cause = redact(networkCause(err), target.apiKey);
  const dropped = /terminated|other side closed|ECONNRESET|socket|aborted|premature close/i.test(cause);
  return fail(dropped ? `connection dropped mid-response: ${cause}` : cause, { cause }, dropped);
}
