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
