// Ending a child lbot owns: the shell-style exit status of a signalled process, and the one stop
// escalation (end of input → grace → SIGTERM → grace → SIGKILL) that plugin processes, MCP servers and
// box managed processes share.
import { constants } from 'node:os';

/** The signal's number on this platform (`os.constants.signals`), for `128 + n` exit statuses. */
export function signalNumber(sig: NodeJS.Signals): number | undefined {
  return constants.signals[sig];
}

/** The exit status a shell reports: the code, or 128 + the signal's number; null when neither is known. */
export function exitStatus(code: number | null, sig: NodeJS.Signals | null): number | null {
  if (code !== null) return code;
  return sig ? 128 + (signalNumber(sig) ?? constants.signals.SIGKILL) : null;
}

/** True once `exited` settles within `ms`; the timer never keeps lbot alive. */
export async function exitsWithin(exited: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  const result = await Promise.race([exited.then(() => true), timeout]);
  clearTimeout(timer);
  return result;
}

export type StopSteps = {
  /** Closes the child's stdin (the polite request to exit). */
  endInput(): void;
  /** Signals the child's whole process group. */
  signal(sig: 'SIGTERM' | 'SIGKILL'): void;
  /** Settles when the child has exited. */
  exited: Promise<unknown>;
  /** Each grace period: after end of input and after SIGTERM. */
  graceMs: number;
  /** The grace after end of input when it differs (box managed processes: 0, SIGTERM follows at once). */
  inputGraceMs?: number;
  /** How long to wait after SIGKILL; default until the child has exited. */
  afterKillMs?: number;
};

/** End of input → grace → SIGTERM → grace → SIGKILL; returns as soon as the child has exited. */
export async function stopEscalating(steps: StopSteps): Promise<void> {
  steps.endInput();
  if (await exitsWithin(steps.exited, steps.inputGraceMs ?? steps.graceMs)) return;
  steps.signal('SIGTERM');
  if (await exitsWithin(steps.exited, steps.graceMs)) return;
  steps.signal('SIGKILL');
  if (steps.afterKillMs === undefined) await steps.exited;
  else await exitsWithin(steps.exited, steps.afterKillMs);
}
