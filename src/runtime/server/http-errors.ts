// Maps error codes to HTTP statuses and the JSON error body every endpoint answers with.
import { toLbotError } from '../../core/errors.js';
import { EXIT, exitCodeFor } from '../../core/exit-codes.js';

const STATUS_BY_EXIT: Record<number, number> = {
  [EXIT.usage]: 400,
  [EXIT.notFound]: 404,
  [EXIT.denied]: 403,
  [EXIT.timeout]: 504,
  [EXIT.unavailable]: 503,
  [EXIT.limit]: 429,
  [EXIT.conflict]: 409,
};

export function httpError(err: unknown): { status: number; body: { ok: false; error: ReturnType<ReturnType<typeof toLbotError>['toJSON']> } } {
  const e = toLbotError(err);
  return { status: STATUS_BY_EXIT[exitCodeFor(e.code)] ?? 500, body: { ok: false, error: e.toJSON() } };
}
