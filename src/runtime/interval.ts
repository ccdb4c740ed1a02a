// A periodic background job that never overlaps itself and never keeps the process alive.

/** Runs `tick` every `ms` until `close()`; a tick still running skips the next; errors go to `onError`. */
export function startInterval(ms: number, tick: () => Promise<unknown>, onError: (err: unknown) => void): { close(): void } {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    tick()
      .catch(onError)
      .finally(() => {
        running = false;
      });
  }, ms);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
