// Tests that need a missing facility are reported as skipped with the reason, never passed silently.

/** The test name, with "(skipped: reason)" appended when `reason` says the test cannot run here. */
export function withReason(name: string, reason: string | null | undefined | false): string {
  return reason ? `${name} (skipped: ${reason})` : name;
}
