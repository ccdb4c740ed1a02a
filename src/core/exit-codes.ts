// The one table from error codes to process exit codes (acceptance.md §0.2).
import type { ErrorCode } from './errors.js';

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

export const EXIT_CODES: Record<ErrorCode, number> = {
  'event.parse_error': EXIT.usage,
  'event.invalid': EXIT.usage,
  'config.invalid': EXIT.usage,
  invalid_argument: EXIT.usage,
  'runner.not_found': EXIT.notFound,
  'runner.not_authorized': EXIT.denied,
  'runner.protocol_error': EXIT.runFailed,
  'runner.start_failed': EXIT.runFailed,
  'runner.crashed': EXIT.runFailed,
  'runner.no_output': EXIT.runFailed,
  'runner.timeout': EXIT.timeout,
  'runner.error': EXIT.runFailed,
  cancelled: EXIT.interrupted,
  'plugins.disabled': EXIT.unavailable,
  'binding.not_found': EXIT.notFound,
  unknown: EXIT.runFailed,
  'host.interrupted': EXIT.runFailed,
  unauthorized: EXIT.denied,
  not_found: EXIT.notFound,
  deadline_exceeded: EXIT.timeout,
  payload_too_large: EXIT.limit,
  rate_limited: EXIT.limit,
  runtime_error: EXIT.runFailed,
  'env.denied': EXIT.denied,
  'box.validation': EXIT.usage,
  'box.mount_denied': EXIT.denied,
  'box.unavailable': EXIT.unavailable,
  'box.session_conflict': EXIT.conflict,
  'box.session_not_found': EXIT.notFound,
  'box.session_limit': EXIT.limit,
  'box.process_conflict': EXIT.conflict,
  'box.process_not_found': EXIT.notFound,
  'box.quota_exceeded': EXIT.limit,
  'box.unauthenticated': EXIT.denied,
  'box.timeout': EXIT.timeout,
  'skill.invalid_archive': EXIT.usage,
  'skill.unsafe_path': EXIT.denied,
  'skill.missing_manifest': EXIT.usage,
  'skill.invalid_name': EXIT.usage,
  'skill.exists': EXIT.conflict,
  'skill.not_found': EXIT.notFound,
  'skill.too_large': EXIT.limit,
  'skill.invalid_source': EXIT.usage,
  'skill.drift': EXIT.runFailed,
  'mcp.invalid_config': EXIT.usage,
  'mcp.not_found': EXIT.notFound,
  'mcp.exists': EXIT.conflict,
  'mcp.connect_failed': EXIT.unavailable,
  'store.unavailable': EXIT.unavailable,
  'store.locked': EXIT.unavailable,
  'replay.mismatch': EXIT.runFailed,
  internal: EXIT.runFailed,
};

/** Exit code of an error code; runner-reported codes outside the table exit 1 (a failed run). */
export function exitCodeFor(code: string): number {
  return Object.hasOwn(EXIT_CODES, code) ? EXIT_CODES[code as ErrorCode] : EXIT.runFailed;
}
