// A deadline on a piece of work that ends the work, not only the wait: when the time runs out the
// work's controller is aborted (the timeout error is its reason) and the promise rejects with that
// error. Every bounded wait in runtime/ goes through here, so a timed-out attempt never runs on.

export type TimeoutOptions = {
  /** Drives the work (its signal was handed to it); aborted when the time runs out. */
  abort: AbortController;
  /** The error the promise rejects with once the time runs out. */
  error: () => Error;
};

/** `work`, or `opts.error()` after `ms` (never below 0) then `opts.abort` aborted. */
export function withTimeout<T>(work: Promise<T>, ms: number, opts: TimeoutOptions): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        const err = opts.error();
        // Rejected before the abort, so the timeout error wins over whatever the aborted work throws.
        reject(err);
        opts.abort.abort(err);
      },
      Math.max(0, ms),
    );
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Waits `ms`, or less when `signal` aborts first; never rejects. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Settles when `work` settles or `signal` aborts, whichever comes first; never rejects. */
export async function settledOrAborted(work: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<void>((resolve) => {
    onAbort = () => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([work.then(noop, noop), aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

function noop(): void {}
