// Box error constructors: one place that picks the code and the details shape (box.md §10.4).
import { LbotError, type ErrorCode } from '../errors.js';

export type UnavailableReason = 'disabled' | 'connect_failed' | 'backend_missing';

type BoxCode = Extract<ErrorCode, `box.${string}`>;

/** A box error with the given code; `type` names the reference error class for the error log. */
export function boxError(code: BoxCode, message: string, details: Record<string, unknown> = {}, hint?: string): LbotError {
  return new LbotError(code, message, { details, ...(hint ? { hint } : {}) });
}

export function validationError(message: string, details: Record<string, unknown> = {}): LbotError {
  return boxError('box.validation', message, details);
}

export function unavailableError(reason: UnavailableReason, message: string, hint?: string): LbotError {
  return boxError('box.unavailable', message, { reason }, hint);
}

/** The reference error class name for a box code (used as `type` in the recent-error log). */
export function errorTypeFor(code: string): string {
  switch (code) {
    case 'box.validation':
    case 'box.mount_denied':
    case 'box.quota_exceeded':
    case 'env.denied':
      return 'BoxValidationError';
    case 'box.unavailable':
      return 'BoxBackendUnavailableError';
    case 'box.session_conflict':
      return 'BoxSessionConflictError';
    case 'box.session_not_found':
      return 'BoxSessionNotFoundError';
    case 'box.session_limit':
      return 'BoxSessionLimitError';
    case 'box.process_conflict':
      return 'BoxManagedProcessConflictError';
    case 'box.process_not_found':
      return 'BoxManagedProcessNotFoundError';
    case 'box.unauthenticated':
      return 'BoxUnauthorizedError';
    default:
      return 'BoxError';
  }
}
