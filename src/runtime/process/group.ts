// Process groups lbot owns: signalling a group (and its family), the exit hook that ends every group
// still tracked when lbot exits, and ending what a reaped leader left behind.
import { familyMembers, familyOf, forgetFamily } from './family.js';

/** Sends a signal to one process, or to a group with a negative pid; false when the target is gone. */
export function signalPid(pid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Sends `signal` to the whole process group and its family; false when none of them exists any more. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  let reached = signalPid(-pgid, signal);
  const family = familyOf(pgid);
  if (family !== undefined && signal !== 0) {
    for (const pid of familyMembers(family)) if (signalPid(pid, signal)) reached = true;
  }
  return reached;
}

const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Remembers a process group so no group outlives lbot, even on process.exit(). */
export function trackGroup(pgid: number): void {
  liveGroups.add(pgid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const group of liveGroups) signalGroup(group, 'SIGKILL');
  });
}

const familyExitObservers = new Set<(survivors: number[]) => void>();

/**
 * Tells `listener` which processes of a family were still running when its leader was reaped (just
 * before lbot ends them): `lbot runner test` reports them as leftovers. Returns the unsubscribe.
 */
export function observeFamilyExit(listener: (survivors: number[]) => void): () => void {
  familyExitObservers.add(listener);
  return () => familyExitObservers.delete(listener);
}

/** Groups whose survivors were already reported to the family-exit observers. */
const reported = new Set<number>();

/** Ends what is left of a group whose leader exited, telling the family-exit observers first (once). */
export function endGroup(pgid: number): void {
  const family = familyOf(pgid);
  if (family !== undefined && familyExitObservers.size > 0 && !reported.has(pgid)) {
    reported.add(pgid);
    const survivors = familyMembers(family);
    if (survivors.length > 0) for (const listener of familyExitObservers) listener(survivors);
  }
  signalGroup(pgid, 'SIGKILL');
}

/** Forgets a group once its leader has been reaped; whatever of its family is left ends with it. */
export function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
  endGroup(pgid);
  forgetFamily(pgid);
  reported.delete(pgid);
}

/** Process groups started by this process and not yet reaped. */
export function liveProcessGroups(): number[] {
  return [...liveGroups];
}
