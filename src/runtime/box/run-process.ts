// Runs one sandboxed command: own process group, gate, timeout that kills the group, streaming bounded capture.
import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { HeadTailCapture } from './capture.js';
import { signalPid } from '../process/group.js';
import { exitStatus } from '../process/stop.js';

export type RunSinks = { stdout?: Writable; stderr?: Writable };

export type RunRequest = {
  argv: readonly string[];
  env: Record<string, string>;
  cwd?: string;
  /** Bytes for stdin; without it stdin is /dev/null. */
  stdin?: Buffer;
  timeoutMs: number;
  signal?: AbortSignal;
  sinks?: RunSinks;
  /** Bytes kept from each end of each stream. */
  captureBytes: number;
  /**
   * When set, the command waits on fd 3 until this hook (given the spawned pid) has run; the script
   * reads one line from fd 3 first. Used to move the process into its cgroup before it can fork. When
   * the hook throws, the process group is killed without being released and the run rejects with the
   * hook's error once the process is gone.
   */
  gate?: (pid: number) => void;
  /** Polled every `intervalMs` while running; a non-null answer kills the group with that note. */
  watchdog?: { intervalMs: number; check: () => Promise<string | null> };
};

export type RunOutcome = {
  status: 'completed' | 'timed_out' | 'aborted';
  exit_code: number | null;
  stdout: HeadTailCapture;
  stderr: HeadTailCapture;
  duration_ms: number;
  /** Set when the watchdog stopped the command. */
  watchdog_note: string | null;
};

/** How long to keep reading after the command exited, for output still in the pipes. */
const DRAIN_GRACE_MS = 200;

function pump(stream: NodeJS.ReadableStream | null, capture: HeadTailCapture, sink: Writable | undefined): void {
  if (!stream) return;
  stream.on('data', (chunk: Buffer) => {
    capture.push(chunk);
    if (sink && !sink.destroyed && !sink.write(chunk)) {
      stream.pause();
      sink.once('drain', () => stream.resume());
    }
  });
  stream.on('error', () => undefined);
}

// Over 100 lines because it is one promise over the child, its two capped pipes and its timers, which
// finish together; stopping is runtime/process/stop.ts.
/** Spawns the command and resolves once it exited and its pipes are drained (or the grace ran out). */
export function runProcess(req: RunRequest): Promise<RunOutcome> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const stdout = new HeadTailCapture(req.captureBytes);
    const stderr = new HeadTailCapture(req.captureBytes);
    const [cmd, ...args] = req.argv;
    if (!cmd) {
      reject(new Error('empty argv'));
      return;
    }
    const child = spawn(cmd, args, {
      env: req.env,
      cwd: req.cwd,
      detached: true,
      stdio: [req.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe', ...(req.gate ? (['pipe'] as const) : [])],
    });
    let status: RunOutcome['status'] = 'completed';
    let note: string | null = null;
    let exitCode: number | null = null;
    let finished = false;
    let gateFailure: { error: unknown } | null = null;
    const timers: NodeJS.Timeout[] = [];
    const killGroup = () => {
      if (child.pid) signalPid(-child.pid, 'SIGKILL');
    };
    const onAbort = () => {
      if (status === 'completed') status = 'aborted';
      killGroup();
    };

    const finish = () => {
      if (finished) return;
      finished = true;
      for (const t of timers) clearTimeout(t);
      req.signal?.removeEventListener('abort', onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      if (gateFailure !== null) {
        reject(gateFailure.error);
        return;
      }
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      resolve({
        status,
        exit_code: status === 'timed_out' ? null : exitCode,
        stdout,
        stderr,
        duration_ms: Math.max(1, Math.round(ms)),
        watchdog_note: note,
      });
    };

    child.on('error', (err) => {
      if (finished) return;
      finished = true;
      for (const t of timers) clearTimeout(t);
      reject(err);
    });
    pump(child.stdout, stdout, req.sinks?.stdout);
    pump(child.stderr, stderr, req.sinks?.stderr);

    child.on('exit', (code, sig) => {
      exitCode = exitStatus(code, sig);
      if (note !== null) exitCode = exitStatus(null, 'SIGKILL');
      timers.push(setTimeout(finish, DRAIN_GRACE_MS));
    });
    child.on('close', finish);

    if (req.stdin && child.stdin) {
      child.stdin.on('error', () => undefined);
      child.stdin.end(req.stdin);
    }
    if (req.gate && child.pid) {
      const gateStream = child.stdio[3];
      gateStream?.on('error', () => undefined);
      try {
        req.gate(child.pid);
        if (gateStream && 'end' in gateStream) gateStream.end('\n');
      } catch (err) {
        // Never release a process that is not where its limits are: kill it while it waits at the gate.
        gateFailure = { error: err };
        killGroup();
        gateStream?.destroy();
      }
    }

    timers.push(
      setTimeout(() => {
        status = 'timed_out';
        killGroup();
      }, req.timeoutMs),
    );
    if (req.signal) {
      if (req.signal.aborted) onAbort();
      else req.signal.addEventListener('abort', onAbort, { once: true });
    }
    if (req.watchdog) {
      const { intervalMs, check } = req.watchdog;
      const tick = () => {
        check()
          .then((reason) => {
            if (finished) return;
            if (reason !== null) {
              note = reason;
              killGroup();
            } else timers.push(setTimeout(tick, intervalMs));
          })
          .catch(() => {
            if (!finished) timers.push(setTimeout(tick, intervalMs));
          });
      };
      timers.push(setTimeout(tick, intervalMs));
    }
  });
}
