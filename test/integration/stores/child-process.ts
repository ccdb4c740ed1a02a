// Spawns the TypeScript child scripts of the store tests with tsx, and makes sure none outlives its test.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../..');
const live = new Set<ChildProcess>();

/** Starts `children/<script>` under node + tsx with stdout piped, optionally as another user (needs root). */
export function spawnChild(script: string, args: string[], as?: { uid: number; gid: number }): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'children', script), ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...as,
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Resolves with the exit code (or signal name) and everything the child printed. */
export function finished(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/** SIGKILLs every child still alive (afterEach). */
export function killAll(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}
