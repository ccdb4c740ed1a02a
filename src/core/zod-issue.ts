// The one reading of a zod failure for people: the first issue as `path: message`, and the parse that
// throws it as a coded LbotError. Every boundary that validates with zod reports through here.
import type { z } from 'zod';
import { LbotError, type ErrorCode, type ErrorInfo } from './errors.js';

type Issues = { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string; code?: string }> };

export type FirstIssue = {
  /** The issue's path below `at`, as strings. */
  path: string[];
  message: string;
  /** zod's issue code (`invalid_type`, …), when there is an issue. */
  code: string | undefined;
  /** `a.b.c: message`; `whole` names the value itself when the path is empty. */
  text: string;
};

/** The first issue of `error`; `at` prefixes the path (a config section), `whole` names an empty path. */
export function firstIssue(error: Issues, whole = '(root)', at: readonly string[] = []): FirstIssue {
  const issue = error.issues[0];
  const path = issue?.path.map(String) ?? [];
  const message = issue?.message ?? 'invalid';
  return { path, message, code: issue?.code, text: `${[...at, ...path].join('.') || whole}: ${message}` };
}

/**
 * `schema` applied to `value`, or an LbotError `code` saying `${what}: path: message` with the path in
 * `details.path`. `info` adds to the error (a hint, more details).
 */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what: string,
  whole: string,
  code: ErrorCode = 'invalid_argument',
  info: ErrorInfo = {},
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = firstIssue(parsed.error, whole);
  throw new LbotError(code, `${what}: ${issue.text}`, { ...info, details: { path: issue.path, ...info.details } });
}
