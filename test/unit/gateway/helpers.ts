// Test helpers for the gateway suites: catching refusals and narrowing results.
import { expect } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import type { NormalizeResult } from '../../../src/core/gateway/index.js';
import type { EventEnvelope } from '../../../src/core/protocol/event.js';
import { thrown } from '../../helpers/thrown.js';

/** The LbotError `run` throws; fails the test when it returns. */
export function refusal(run: () => unknown): LbotError {
  return thrown(run, LbotError);
}

/** The envelope of an `event` result; fails the test for a challenge or a skip. */
export function envelopeOf(result: NormalizeResult): EventEnvelope {
  if (result.kind !== 'event') throw new Error(`expected an event, got ${result.kind}: ${JSON.stringify(result)}`);
  return result.envelope;
}

/** Asserts an `ignored` result whose reason matches. */
export function expectIgnored(result: NormalizeResult, reason: RegExp): void {
  expect(result.kind).toBe('ignored');
  if (result.kind === 'ignored') expect(result.reason).toMatch(reason);
}
