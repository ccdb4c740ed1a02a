// Shared shape of the contract suites: a factory that opens a fresh, empty implementation.
import { expect } from 'vitest';
import { LbotError, type ErrorCode } from '../../src/core/errors.js';

/** Opens a fresh, empty store; `close()` releases it (and whatever temp files it used). */
export type OpenStore<T> = () => T & { close(): void };

/** Runs `fn` and returns the LbotError it throws; fails the test when it throws nothing or something else. */
export function lbotErrorOf(fn: () => unknown): LbotError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(LbotError);
    if (err instanceof LbotError) return err;
  }
  throw new Error('expected an LbotError, nothing was thrown');
}

/** Asserts that `fn` throws an LbotError with `code`, and returns it for further checks. */
export function expectLbotError(fn: () => unknown, code: ErrorCode): LbotError {
  const err = lbotErrorOf(fn);
  expect(err.code).toBe(code);
  return err;
}
