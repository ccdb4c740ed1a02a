// The one interrupt of a command: the first SIGINT or SIGTERM aborts `signal`; the listeners go with
// it, so a second signal ends lbot at once (Node's default). They are installed only when a command
// asks for the signal: a command that never looks keeps the default and ends on the first one.
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export type Interrupt = {
  /** Aborted (reason: the signal's name) on the first SIGINT or SIGTERM. */
  readonly signal: AbortSignal;
  /** Removes the listeners, if any (the command has returned). */
  dispose(): void;
};

export function createInterrupt(): Interrupt {
  const controller = new AbortController();
  let installed = false;
  const onSignal = (name: NodeJS.Signals): void => {
    remove();
    controller.abort(name);
  };
  const remove = (): void => {
    for (const name of SIGNALS) process.off(name, onSignal);
  };
  return {
    get signal() {
      if (!installed && !controller.signal.aborted) {
        installed = true;
        for (const name of SIGNALS) process.once(name, onSignal);
      }
      return controller.signal;
    },
    dispose: remove,
  };
}

/** Resolves once `signal` is aborted. */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
