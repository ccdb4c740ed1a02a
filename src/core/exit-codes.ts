// Exit codes of error codes, derived from the one error table (acceptance.md §0.2).
import { errorClassOf } from './error-table.js';

export { EXIT } from './error-table.js';

/** Exit code of an error code; runner-reported codes outside the table exit 1 (a failed run). */
export function exitCodeFor(code: string): number {
  return errorClassOf(code).exit;
}
