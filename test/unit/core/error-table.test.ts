// The error table: the exit map and HTTP statuses derive from it, and its rows stay consistent.
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ERROR_TABLE, errorClassOf, EXIT } from '../../../src/core/error-table.js';
import { LbotError } from '../../../src/core/errors.js';
import { exitCodeFor } from '../../../src/core/exit-codes.js';
import { httpError } from '../../../src/runtime/server/http-errors.js';

describe('error table', () => {
  it('lists every code once, and the code list is the table', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    expect([...ERROR_CODES].sort()).toEqual(Object.keys(ERROR_TABLE).sort());
  });

  it('keeps the acceptance exit codes (§0.2)', () => {
    expect(exitCodeFor('event.parse_error')).toBe(2);
    expect(exitCodeFor('runner.not_found')).toBe(3);
    expect(exitCodeFor('runner.not_authorized')).toBe(4);
    expect(exitCodeFor('runner.timeout')).toBe(5);
    expect(exitCodeFor('plugins.disabled')).toBe(6);
    expect(exitCodeFor('box.quota_exceeded')).toBe(7);
    expect(exitCodeFor('skill.exists')).toBe(8);
    expect(exitCodeFor('cancelled')).toBe(130);
    expect(exitCodeFor('runner.crashed')).toBe(1);
  });

  it('treats a runner-reported code outside the table as a failed run', () => {
    expect(exitCodeFor('runner.my_own_code')).toBe(EXIT.runFailed);
    expect(exitCodeFor('toString')).toBe(EXIT.runFailed);
    expect(exitCodeFor('__proto__')).toBe(EXIT.runFailed);
    expect(errorClassOf('constructor').status).toBe(500);
  });

  it('gives user faults 4xx statuses and system faults 5xx (cancelled aside: no HTTP route ends with it)', () => {
    for (const code of ERROR_CODES) {
      const row = errorClassOf(code);
      if (code === 'cancelled') continue;
      if (row.kind === 'user') expect([code, row.status >= 400 && row.status < 500]).toEqual([code, true]);
      else expect([code, row.status >= 500]).toEqual([code, true]);
    }
  });

  it('answers HTTP with the status of the code, unauthorized as a real 401', () => {
    expect(httpError(new LbotError('unauthorized', 'no token')).status).toBe(401);
    expect(httpError(new LbotError('payload_too_large', 'big')).status).toBe(413);
    expect(httpError(new LbotError('rate_limited', 'busy')).status).toBe(429);
    expect(httpError(new LbotError('runner.not_authorized', 'no')).status).toBe(403);
    expect(httpError(new LbotError('run.not_in_flight', 'done')).status).toBe(409);
    expect(httpError(new LbotError('store.unavailable', 'gone')).status).toBe(503);
    expect(httpError(new Error('boom'))).toEqual({
      status: 500,
      body: { ok: false, error: { code: 'internal', message: 'boom', retryable: false, details: {} } },
    });
  });
});
