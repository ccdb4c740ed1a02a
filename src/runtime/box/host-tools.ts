// Finding host binaries on PATH and running short probe commands with a deadline.
import { accessSync, constants, statSync } from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { signalPid } from '../process/group.js';

const STANDARD_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** Absolute path of an executable: `name` itself when it contains a slash, else the first hit on PATH. */
export function findExecutable(name: string, envPath: string = process.env.PATH ?? ''): string | null {
  const candidates = name.includes('/') ? [path.resolve(name)] : [...envPath.split(':').filter(Boolean), ...STANDARD_DIRS].map((d) => path.join(d, name));
  for (const c of candidates) {
    try {
      if (!statSync(c).isFile()) continue;
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not here
    }
  }
  return null;
}

export type ProbeResult = { ok: boolean; code: number | null; output: string; detail: string };

/** Runs a short command (no stdin) and reports whether it exited 0 within `timeoutMs`. */
export function probeCommand(argv: readonly string[], timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const [cmd, ...args] = argv;
    if (!cmd) {
      resolve({ ok: false, code: null, output: '', detail: 'empty command' });
      return;
    }
    let output = '';
    let settled = false;
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const done = (r: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const timer = setTimeout(() => {
      if (child.pid) signalPid(-child.pid, 'SIGKILL');
      done({ ok: false, code: null, output, detail: `timed out after ${timeoutMs} ms` });
    }, timeoutMs);
    const add = (b: Buffer) => {
      if (output.length < 65_536) output += b.toString('utf8');
    };
    child.stdout.on('data', add);
    child.stderr.on('data', add);
    child.on('error', (err) => done({ ok: false, code: null, output, detail: err.message }));
    child.on('close', (code) => done({ ok: code === 0, code, output, detail: output.trim().split('\n').slice(-2).join(' ').slice(0, 300) }));
  });
}
