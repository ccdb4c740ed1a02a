// Starts a plugin process: argv from the manifest's `execution`, own process group, piped stdio.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import { builtEntry } from '../../package-root.js';
import type { Readable, Writable } from 'node:stream';
import { LbotError } from '../../core/errors.js';
import type { Execution } from '../../core/protocol/index.js';
import { FAMILY_ENV, adoptFamily, newFamily } from '../process/family.js';
import type { SandboxedLaunch } from './sandbox.js';

export type PluginProcess = ChildProcessByStdio<Writable, Readable, Readable>;

/** The bootstrap that serves a `definePlugin` module on stdio (always the build). */
export const DEFAULT_BOOTSTRAP = builtEntry('sdk/plugin-main');

/**
 * V8 flags of an `execution.node` plugin. A runner is a short-lived process whose hot path (the SDK's
 * framing, validation and dispatch of each call) runs a few thousand times at most; V8's default interrupt
 * budget keeps it in the interpreter and baseline code for most of that. A quarter of the budget tiers it up
 * sooner: the first 2,000 `state.get` round trips of a fresh runner take 57 µs instead of 105 µs (p50, host
 * and runner pinned to one core), at no cost measured at start-up or in heavier runners (docs/benchmarks.md).
 */
export const PLUGIN_NODE_FLAGS: readonly string[] = ['--interrupt-budget=16384'];

/** The argv that runs a plugin; `python` execution is refused (lbot has no Python runtime). */
export function resolveCommand(execution: Execution, dir: string, bootstrap: string = DEFAULT_BOOTSTRAP): { file: string; args: string[] } {
  if ('node' in execution) {
    return { file: process.execPath, args: [...PLUGIN_NODE_FLAGS, bootstrap, path.resolve(dir, execution.node.path)] };
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
    child.once('exit', (code) => launch.settle(code));
    child.once('error', () => launch.settle(null));
  }
  return { child, exitNote: () => launch?.exitNote() ?? null };
}

/** A printable command line for error messages. */
export function describeCommand(cmd: { file: string; args: string[] }): string {
  return [cmd.file, ...cmd.args].map((a) => (/^[\w./:=@-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}
