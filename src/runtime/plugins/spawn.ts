// Starts a plugin process: argv from the manifest's `execution`, own process group, piped stdio.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable, Writable } from 'node:stream';
import { LbotError } from '../../core/errors.js';
import type { Execution } from '../../core/protocol/index.js';

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

/** Spawns detached (own process group) so the whole group can be signalled with kill(-pid). */
export function spawnPlugin(cmd: { file: string; args: string[] }, cwd: string, env: Record<string, string>): PluginProcess {
  return spawn(cmd.file, cmd.args, { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
}

/** A printable command line for error messages. */
export function describeCommand(cmd: { file: string; args: string[] }): string {
  return [cmd.file, ...cmd.args].map((a) => (/^[\w./:=@-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}

/** Sends `signal` to the whole process group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
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

/** Forgets a group once it has been reaped. */
export function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
}

/** Process groups started by this process and not yet reaped. */
export function liveProcessGroups(): number[] {
  return [...liveGroups];
}
