// Shared shape of the contract suites: a factory that opens a fresh, empty implementation of the
// Promise-returning store interfaces (SQLite through asAsyncStores, PostgreSQL natively).
import { expect } from 'vitest';
import { LbotError, type ErrorCode } from '../../src/core/errors.js';

/** Opens a fresh, empty store; `close()` releases it (and whatever temp files or database it used). */
export type OpenStore<T> = () => Promise<T & { close(): Promise<void> | void }>;

/** Runs `fn` and returns the LbotError it throws or rejects with; fails the test when it settles without one. */
export async function lbotErrorOf(fn: () => unknown): Promise<LbotError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(LbotError);
    if (err instanceof LbotError) return err;
  }
  throw new Error('expected an LbotError, nothing was thrown');
}

/** Asserts that `fn` throws (or rejects with) an LbotError with `code`, and returns it for further checks. */
export async function expectLbotError(fn: () => unknown, code: ErrorCode): Promise<LbotError> {
  const err = await lbotErrorOf(fn);
  expect(err.code).toBe(code);
  return err;
}

/** The synchronous form, for tests of a synchronous store that must throw before returning. */
export function expectLbotErrorSync(fn: () => unknown, code: ErrorCode): LbotError {
  let caught: unknown = null;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(LbotError);
  if (!(caught instanceof LbotError)) throw new Error('expected an LbotError, nothing was thrown');
  expect(caught.code).toBe(code);
  return caught;
}
