// Starts a session's detached holder: bwrap reports its namespaces on one pipe, the keeper says ready on another.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { LbotError } from '../../core/errors.js';
import { identityOf, type ProcessIdentity } from '../process/identity.js';
import { signalPid } from '../process/group.js';
import { HELPER_ENV } from './bwrap-args.js';

const HOLDER_START_TIMEOUT_MS = 10_000;

/** Spawns the holder (argv from buildHolderArgv) and resolves once its namespaces exist and its mounts are done. */
export function spawnHolder(argv: string[], dir: string, seccompFd: number): Promise<{ holder: ProcessIdentity; ns: ProcessIdentity }> {
  return new Promise((resolve, reject) => {
    const logFd = openSync(path.join(dir, 'holder.log'), 'a', 0o600);
    const [cmd, ...args] = argv;
    const child = spawn(cmd ?? 'bwrap', args, { detached: true, stdio: ['ignore', 'ignore', logFd, 'pipe', 'pipe', seccompFd], env: { ...HELPER_ENV } });
    closeSync(logFd);
    let text = '';
    let done = false;
    let nsPidFromInfo: number | null = null;
    let ready = false;
    const info = child.stdio[3];
    const readyPipe = child.stdio[4];
    const fail = (why: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (child.pid) signalPid(-child.pid, 'SIGKILL');
      let log = '';
      try {
        log = readFileSync(path.join(dir, 'holder.log'), 'utf8').trim().slice(-300);
      } catch {
        // no log
      }
      reject(
        new LbotError('box.unavailable', `the bwrap session holder did not start: ${why}${log ? `: ${log}` : ''}`, {
          details: { reason: 'backend_missing' },
        }),
      );
    };
    const timer = setTimeout(() => fail(`no namespace info within ${HOLDER_START_TIMEOUT_MS} ms`), HOLDER_START_TIMEOUT_MS);
    child.on('error', (err) => fail(err.message));
    child.on('exit', (code) => fail(`it exited with code ${code}`));
    // bwrap writes the info in several pieces and closes the fd when done; reading to EOF avoids
    // killing the holder with SIGPIPE by closing our end early.
    info?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    // The namespaces exist once bwrap closes the info fd; the mounts are done once the keeper says ready.
    const settle = () => {
      if (done || nsPidFromInfo === null || !ready) return;
      const ns = identityOf(nsPidFromInfo);
      const holder = child.pid ? identityOf(child.pid) : null;
      if (!ns || !holder) return fail('the sandbox exited right after starting');
      done = true;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      info?.destroy();
      readyPipe?.destroy();
      child.unref();
      resolve({ holder, ns });
    };
    info?.on('end', () => {
      const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (!m) return fail('bwrap reported no child pid');
      nsPidFromInfo = Number(m[1]);
      settle();
    });
    info?.on('error', () => undefined);
    let readyText = '';
    readyPipe?.on('data', (chunk: Buffer) => {
      readyText += chunk.toString('utf8');
      if (readyText.includes('ready')) {
        ready = true;
        settle();
      }
    });
    readyPipe?.on('error', () => undefined);
  });
}
