// The one renderer of HTTP errors: anything a route or hook throws becomes an LbotError, answered with
// its code's status from the error table and the JSON error body every endpoint answers with.
import type { FastifyReply } from 'fastify';
import { errorClassOf } from '../../core/error-table.js';
import { LbotError, toLbotError } from '../../core/errors.js';
import { isRecord } from '../../core/json.js';

export type HttpErrorBody = { ok: false; error: ReturnType<LbotError['toJSON']> };

/** Fastify's own refusals (unparsable or oversized bodies) as the lbot codes the API documents. */
function fromFastify(err: unknown): LbotError | null {
  const fastifyCode = isRecord(err) && typeof err.code === 'string' ? err.code : '';
  if (fastifyCode === 'FST_ERR_CTP_INVALID_JSON_BODY' || (err instanceof SyntaxError && !(err instanceof LbotError))) {
    return new LbotError('event.parse_error', `request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (fastifyCode === 'FST_ERR_CTP_BODY_TOO_LARGE') return new LbotError('payload_too_large', 'request body is over the size limit');
  return null;
}

export function httpError(err: unknown): { status: number; body: HttpErrorBody } {
  const e = fromFastify(err) ?? toLbotError(err);
  return { status: errorClassOf(e.code).status, body: { ok: false, error: e.toJSON() } };
}

/** Sends the error; a 401 names the scheme that would be accepted (RFC 9110 §11.6.1). */
export function sendHttpError(reply: FastifyReply, err: unknown): FastifyReply {
  const { status, body } = httpError(err);
  if (status === 401) reply.header('www-authenticate', 'Bearer');
  return reply.code(status).send(body);
}
