// Errors as values: one closed set of stable codes (acceptance.md §0.3), carried by LbotError.

export const ERROR_CODES = [
  // input
  'event.parse_error',
  'event.invalid',
  'config.invalid',
  'invalid_argument',
  'env.denied',
  // runner / run
  'runner.not_found',
  'runner.not_authorized',
  'runner.protocol_error',
  'runner.start_failed',
  'runner.crashed',
  'runner.no_output',
  'runner.timeout',
  'runner.error',
  'cancelled',
  'plugins.disabled',
  'binding.not_found',
  'unknown',
  // host: the lbot process running a run ended (crash, kill -9) before the run finished; retryable
  'host.interrupted',
  // host API (wire) codes that can surface locally too
  'unauthorized',
  'not_found',
  'deadline_exceeded',
  'payload_too_large',
  'rate_limited',
  'runtime_error',
  // box
  'box.validation',
  'box.mount_denied',
  'box.unavailable',
  'box.session_conflict',
  'box.session_not_found',
  'box.session_limit',
  'box.process_conflict',
  'box.process_not_found',
  'box.quota_exceeded',
  'box.unauthenticated',
  'box.timeout',
  // skills
  'skill.invalid_archive',
  'skill.unsafe_path',
  'skill.missing_manifest',
  'skill.invalid_name',
  'skill.exists',
  'skill.not_found',
  'skill.too_large',
  'skill.invalid_source',
  'skill.drift',
  // mcp
  'mcp.invalid_config',
  'mcp.not_found',
  'mcp.exists',
  'mcp.connect_failed',
  // stores
  'store.unavailable',
  'store.locked',
  // record / replay
  'replay.mismatch',
  // anything unexpected
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export type ErrorInfo = {
  retryable?: boolean;
  details?: Record<string, unknown>;
  hint?: string;
  cause?: unknown;
};

/** An error with a stable code; the CLI maps codes to exit codes in one table. */
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
  toJSON(): { code: ErrorCode; message: string; retryable: boolean; details: Record<string, unknown> } {
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
