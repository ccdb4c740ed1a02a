// The one error table (acceptance.md §0.2, §0.3): every stable code with its process exit code, its
// HTTP status and whether the caller (user) or lbot and what it runs on (system) is at fault.
// The code list, the CLI exit map and the server's statuses all derive from it; a new code is one row.

export const EXIT = {
  ok: 0,
  runFailed: 1,
  usage: 2,
  notFound: 3,
  denied: 4,
  timeout: 5,
  unavailable: 6,
  limit: 7,
  conflict: 8,
  interrupted: 130,
  /** `box exec`: the command timed out (container-CLI habit). */
  boxTimeout: 124,
  /** `box exec`: lbot or the sandbox refused or failed around the command. */
  boxRefused: 125,
} as const;

export type ErrorKind = 'user' | 'system';
export type ErrorClass = { readonly exit: number; readonly status: number; readonly kind: ErrorKind };

/** The classes most codes fall in; a row may also spell out its own `{ exit, status, kind }`. */
const usage: ErrorClass = { exit: EXIT.usage, status: 400, kind: 'user' };
const notFound: ErrorClass = { exit: EXIT.notFound, status: 404, kind: 'user' };
const denied: ErrorClass = { exit: EXIT.denied, status: 403, kind: 'user' };
const unauthenticated: ErrorClass = { exit: EXIT.denied, status: 401, kind: 'user' };
const conflict: ErrorClass = { exit: EXIT.conflict, status: 409, kind: 'user' };
const limit: ErrorClass = { exit: EXIT.limit, status: 429, kind: 'user' };
const tooLarge: ErrorClass = { exit: EXIT.limit, status: 413, kind: 'user' };
const timeout: ErrorClass = { exit: EXIT.timeout, status: 504, kind: 'system' };
const unavailable: ErrorClass = { exit: EXIT.unavailable, status: 503, kind: 'system' };
const failed: ErrorClass = { exit: EXIT.runFailed, status: 500, kind: 'system' };
/** A run the caller stopped (Ctrl-C, cancel): not a fault of lbot's. */
const interrupted: ErrorClass = { exit: EXIT.interrupted, status: 500, kind: 'user' };

export const ERROR_TABLE = {
  // input
  'event.parse_error': usage,
  'event.invalid': usage,
  'config.invalid': usage,
  invalid_argument: usage,
  /** The command line itself: an unknown command or flag, a missing argument. */
  usage,
  'env.denied': denied,
  // runner / run
  'runner.not_found': notFound,
  'runner.not_authorized': denied,
  'runner.protocol_error': failed,
  'runner.start_failed': failed,
  'runner.crashed': failed,
  'runner.no_output': failed,
  'runner.timeout': timeout,
  'runner.error': failed,
  /** The runner's model calls failed (every fallback before output, or the committed model after). */
  'runner.llm_error': failed,
  /** A tool call failed in a way the runner could not hand back to the model. */
  'runner.tool_error': failed,
  cancelled: interrupted,
  'plugins.disabled': unavailable,
  'binding.not_found': notFound,
  /** Cancelling a run that already ended. */
  'run.not_in_flight': conflict,
  /** A new event for a conversation whose binding has run_policy reject while a run of it is going. */
  'run.conversation_busy': conflict,
  /** An HTTP bot message whose idempotency key was already accepted (docs/http-bot.md). */
  'http_bot.duplicate': conflict,
  unknown: failed,
  // host: the lbot process running a run ended (crash, kill -9) before the run finished; retryable
  'host.interrupted': failed,
  // queue: the lbot worker running a run died (kill -9, lost machine) and the run is not tried again (docs/scale.md)
  'run.worker_lost': failed,
  // host API (wire) codes that can surface locally too
  unauthorized: unauthenticated,
  not_found: notFound,
  deadline_exceeded: timeout,
  payload_too_large: tooLarge,
  rate_limited: limit,
  runtime_error: failed,
  // box
  'box.validation': usage,
  'box.mount_denied': denied,
  'box.unavailable': unavailable,
  'box.session_conflict': conflict,
  'box.session_not_found': notFound,
  'box.session_limit': limit,
  'box.process_conflict': conflict,
  'box.process_not_found': notFound,
  'box.quota_exceeded': limit,
  'box.unauthenticated': denied,
  'box.timeout': timeout,
  // skills
  'skill.invalid_archive': usage,
  'skill.unsafe_path': denied,
  'skill.missing_manifest': usage,
  'skill.invalid_name': usage,
  'skill.exists': conflict,
  'skill.not_found': notFound,
  'skill.too_large': limit,
  'skill.invalid_source': usage,
  'skill.drift': failed,
  // mcp
  'mcp.invalid_config': usage,
  'mcp.not_found': notFound,
  'mcp.exists': conflict,
  'mcp.connect_failed': unavailable,
  'mcp.auth_required': unauthenticated,
  'mcp.auth_failed': denied,
  // knowledge bases (docs/knowledge.md)
  'kb.invalid_name': usage,
  'kb.exists': conflict,
  'kb.not_found': notFound,
  'kb.too_large': tooLarge,
  'kb.unsupported_file': usage,
  'kb.unreadable': usage,
  'kb.embedding_failed': unavailable,
  // stores
  'store.unavailable': unavailable,
  'store.locked': unavailable,
  // record / replay
  'replay.mismatch': failed,
  // anything unexpected
  internal: failed,
} as const satisfies Record<string, ErrorClass>;

export type ErrorCode = keyof typeof ERROR_TABLE;

export const ERROR_CODES = Object.keys(ERROR_TABLE) as readonly ErrorCode[];

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_TABLE, code);
}

/** The row of a code; codes outside the table (a runner's own) are failed runs. */
export function errorClassOf(code: string): ErrorClass {
  return isErrorCode(code) ? ERROR_TABLE[code] : failed;
}
