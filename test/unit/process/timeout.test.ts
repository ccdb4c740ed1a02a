// A timeout ends the work it bounds: the controller is aborted with the timeout error as its reason.
import { describe, expect, it } from 'vitest';
import { withTimeout } from '../../../src/runtime/process/timeout.js';

describe('withTimeout', () => {
  it('aborts the work and rejects with the timeout error when the time runs out', async () => {
    const abort = new AbortController();
    const work = new Promise<string>((_, reject) => abort.signal.addEventListener('abort', () => reject(new Error('work stopped'))));
    const err = new Error('too slow');
    await expect(withTimeout(work, 0, { abort, error: () => err })).rejects.toBe(err);
    expect(abort.signal.aborted).toBe(true);
    expect(abort.signal.reason).toBe(err);
  });

  it('settles with the work and leaves the controller alone when the work is in time', async () => {
    const abort = new AbortController();
    await expect(withTimeout(Promise.resolve('done'), 60_000, { abort, error: () => new Error('too slow') })).resolves.toBe('done');
    expect(abort.signal.aborted).toBe(false);
  });
});
