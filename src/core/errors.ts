// Errors as values: one closed set of stable codes (acceptance.md §0.3), carried by LbotError.
// The codes, with their exit codes, HTTP statuses and kinds, are the rows of core/error-table.ts.
import type { ErrorCode } from './error-table.js';
import type { ErrorValue } from './protocol/error-value.js';

export { ERROR_CODES, type ErrorCode } from './error-table.js';

export type ErrorInfo = {
  retryable?: boolean;
  details?: Record<string, unknown>;
  hint?: string;
  cause?: unknown;
};

/** An error with a stable code; its exit code and HTTP status come from the error table. */
export class LbotError extends Error {
  override name = 'LbotError';
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;
  readonly hint: string | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    info: ErrorInfo = {},
  ) {
    super(message, { cause: info.cause });
    this.retryable = info.retryable ?? false;
    this.details = info.details ?? {};
    this.hint = info.hint;
  }

  /** The JSON shape printed with `--json` and stored in run records. */
  toJSON(): ErrorValue & { code: ErrorCode } {
    return { code: this.code, message: this.message, retryable: this.retryable, details: this.details };
  }
}

/** True when `value` is an LbotError (works across module copies by checking the shape). */
export function isLbotError(value: unknown): value is LbotError {
  return value instanceof LbotError;
}

/** Wraps anything thrown into an LbotError, keeping LbotErrors as they are. */
export function toLbotError(value: unknown, fallback: ErrorCode = 'internal'): LbotError {
  if (value instanceof LbotError) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new LbotError(fallback, message, { cause: value });
}
