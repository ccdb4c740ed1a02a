// Starts a plugin process: argv from the manifest's `execution`, own process group, piped stdio.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable, Writable } from 'node:stream';
import { LbotError } from '../../core/errors.js';
import type { Execution } from '../../core/protocol/index.js';
import type { SandboxedLaunch } from './sandbox.js';

export type PluginProcess = ChildProcessByStdio<Writable, Readable, Readable>;

/** `dist/sdk/plugin-main.js`, the bootstrap that serves a `definePlugin` module on stdio. */
export const DEFAULT_BOOTSTRAP = fileURLToPath(new URL('../../../dist/sdk/plugin-main.js', import.meta.url));

/** The argv that runs a plugin; `python` execution is refused (lbot has no Python runtime). */
export function resolveCommand(execution: Execution, dir: string, bootstrap: string = DEFAULT_BOOTSTRAP): { file: string; args: string[] } {
  if ('node' in execution) {
    return { file: process.execPath, args: [bootstrap, path.resolve(dir, execution.node.path)] };
  }
  if ('command' in execution) {
    const [first = '', ...args] = execution.command;
    // `node` means the Node.js running lbot, so a plugin behaves the same whatever PATH holds.
    if (first === 'node') return { file: process.execPath, args };
    const file = first.startsWith('./') || first.startsWith('../') ? path.resolve(dir, first) : first;
    return { file, args };
  }
  throw new LbotError(
    'runner.start_failed',
    `plugin in ${dir} declares execution.python (${execution.python.path}); lbot cannot run Python plugin modules directly`,
    { hint: 'use execution.command, e.g. [python3, main.py], with a program that speaks the lbot JSON-RPC protocol on stdio' },
  );
}

/** Wraps a plugin's argv and env into a sandboxed launch (plugins/sandbox.ts), or null to run it as is. */
export type Isolate = (cmd: { file: string; args: string[] }, env: Record<string, string>) => SandboxedLaunch | null;

/**
 * Spawns detached (own process group) so the whole group can be signalled with kill(-pid). Sandboxed,
 * the group holds the sandbox's init: killing the group ends the sandbox's pid namespace.
 */
export function spawnPlugin(
  cmd: { file: string; args: string[] },
  cwd: string,
  env: Record<string, string>,
  isolate?: Isolate,
): { child: PluginProcess; exitNote: () => string | null } {
  const family = newFamily();
  const full = { ...env, [FAMILY_ENV]: family };
  const launch = isolate?.(cmd, full) ?? null;
  const child = launch
    ? spawn(launch.file, launch.args, { cwd: '/', env: launch.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true })
    : spawn(cmd.file, cmd.args, { cwd, env: full, detached: true, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
  if (child.pid) adoptFamily(child.pid, family);
  if (launch) {
    child.once('exit', () => launch.settle());
    child.once('error', () => launch.settle());
  }
  return { child, exitNote: () => launch?.exitNote() ?? null };
}

/**
 * Every process lbot starts for a plugin or an MCP server carries a random family marker in its env,
 * which its descendants inherit. A descendant that left the process group (setsid) or was orphaned
 * is still found by the marker and ends with the family.
 */
export const FAMILY_ENV = 'LBOT_PROCESS_FAMILY';

/** Process group leader → family marker. */
const families = new Map<number, string>();

export function newFamily(): string {
  return randomBytes(12).toString('hex');
}

/** Links the family marker to the group leader `pid`, so signalling the group reaches the family. */
export function adoptFamily(pid: number, family: string): void {
  families.set(pid, family);
}

/** Live processes whose environment carries `family` (only processes this user may read). */
export function familyMembers(family: string): number[] {
  const needle = `${FAMILY_ENV}=${family}`;
  const out: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(needle)) out.push(pid);
    } catch {
      // exited meanwhile, or another user's process
    }
  }
  return out;
}

/** A printable command line for error messages. */
export function describeCommand(cmd: { file: string; args: string[] }): string {
  return [cmd.file, ...cmd.args].map((a) => (/^[\w./:=@-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}

/** Sends `signal` to the whole process group and its family; false when none of them exists any more. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  let reached = false;
  try {
    process.kill(-pgid, signal);
    reached = true;
  } catch {
    // the group is gone; family members outside it may not be
  }
  const family = families.get(pgid);
  if (family !== undefined && signal !== 0) {
    for (const pid of familyMembers(family)) {
      try {
        process.kill(pid, signal);
        reached = true;
      } catch {
        // exited meanwhile
      }
    }
  }
  return reached;
}

const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Remembers a plugin process group so no group outlives lbot, even on process.exit(). */
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
  const family = families.get(pgid);
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
  families.delete(pgid);
  reported.delete(pgid);
}

/** Process groups started by this process and not yet reaped. */
export function liveProcessGroups(): number[] {
  return [...liveGroups];
}
