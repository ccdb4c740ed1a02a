// Refusals answered to runners: `AgentAPIError` values with a code and a reason (runner-protocol.md §7.1).
import { LbotError } from '../errors.js';
import type { AgentApiError, ApiErrorCode } from '../protocol/proxy.js';

/** Thrown by proxy handlers; the plugin connection sends it as JSON-RPC error -32000 with `data`. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly reason: string,
    readonly extra: Record<string, unknown> = {},
    readonly retryable = false,
  ) {
    super(message);
  }

  toWire(): AgentApiError {
    return { code: this.code, message: this.message, retryable: this.retryable, details: { reason: this.reason, ...this.extra } };
  }
}

/** Any thrown value as the wire error a runner receives; unexpected failures become runtime_error. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  // A refused environment variable is the caller's bad argument; the lbot code travels in details.
  if (err instanceof LbotError && err.code === 'env.denied') {
    return new ApiError('invalid_argument', err.message, 'env_denied', { error_code: err.code, ...err.details });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ApiError('runtime_error', message, 'downstream_error');
}
