// Runs one command through a session's exec agent (native/exec-agent.c): the host side of its socket protocol.
import { closeSync, openSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import path from 'node:path';
import { constants } from 'node:os';
import { HeadTailCapture } from './capture.js';
import type { RunOutcome, RunRequest } from './run-process.js';

/** How long to keep reading after the command exited, for output still in the pipes (as runProcess). */
const DRAIN_GRACE_MS = 200;
/** After a kill request, how long the agent has to report the exit before the connection is dropped. */
const KILL_GRACE_MS = 2000;
/** A reply frame larger than this is a broken agent (it sends at most 64 KiB per frame). */
const MAX_FRAME = 1 << 20;

/** The agent could not be reached: the caller falls back to entering the namespaces. */
export class AgentUnreachable extends Error {}

function request(argv: readonly string[], env: Record<string, string>, stdin: Buffer | undefined): Buffer {
  const strings = Buffer.from([...argv, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)].map((s) => `${s}\0`).join(''), 'utf8');
  const head = Buffer.alloc(20);
  head.write('LBX1', 0, 'latin1');
  head.writeUInt32LE(argv.length, 4);
  head.writeUInt32LE(Object.keys(env).length, 8);
  head.writeUInt32LE(strings.length, 12);
  head.writeUInt32LE(stdin?.length ?? 0, 16);
  return Buffer.concat([head, strings, ...(stdin ? [stdin] : [])]);
}

/** sun_path holds 108 bytes; a longer path is reached through an open descriptor of its directory. */
const SUN_PATH_MAX = 100;

function connect(socketPath: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    let dirFd: number | null = null;
    let target = socketPath;
    if (Buffer.byteLength(socketPath) > SUN_PATH_MAX) {
      try {
        dirFd = openSync(path.dirname(socketPath), 'r');
      } catch (err) {
        reject(new AgentUnreachable(err instanceof Error ? err.message : String(err)));
        return;
      }
      target = `/proc/self/fd/${dirFd}/${path.basename(socketPath)}`;
    }
    const release = () => {
      if (dirFd !== null) closeSync(dirFd);
      dirFd = null;
    };
    const sock = createConnection({ path: target });
    sock.once('connect', () => {
      release();
      sock.removeAllListeners('error');
      resolve(sock);
    });
    sock.once('error', (err) => {
      release();
      reject(new AgentUnreachable(err.message));
    });
  });
}

function signalNumberToStatus(n: number): number {
  return 128 + (n > 0 ? n : constants.signals.SIGKILL);
}

/**
 * Sends `argv` with exactly `env` to the agent listening on `socketPath` and resolves like runProcess:
 * capped capture, sinks, timeout and abort killing the command's process group, the watchdog.
 * Rejects with AgentUnreachable when nothing answers on the socket (nothing ran).
 */
export async function runViaAgent(socketPath: string, req: Omit<RunRequest, 'gate' | 'cwd'>): Promise<RunOutcome> {
  const sock = await connect(socketPath);
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const stdout = new HeadTailCapture(req.captureBytes);
    const stderr = new HeadTailCapture(req.captureBytes);
    let status: RunOutcome['status'] = 'completed';
    let note: string | null = null;
    let exitCode: number | null = null;
    let exited = false;
    let finished = false;
    let buf: Buffer = Buffer.alloc(0);
    const timers: NodeJS.Timeout[] = [];
    const kill = () => {
      if (exited || sock.destroyed) return;
      sock.write('K');
      sock.resume();
      timers.push(setTimeout(() => finish(), KILL_GRACE_MS));
    };
    const onAbort = () => {
      if (status === 'completed') status = 'aborted';
      kill();
    };
    const finish = (error?: Error) => {
      if (finished) return;
      finished = true;
      for (const t of timers) clearTimeout(t);
      req.signal?.removeEventListener('abort', onAbort);
      sock.destroy();
      if (error) return reject(error);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      resolve({
        status,
        exit_code: status === 'timed_out' || !exited ? null : exitCode,
        stdout,
        stderr,
        duration_ms: Math.max(1, Math.round(ms)),
        watchdog_note: note,
      });
    };
    const deliver = (type: number, payload: Buffer): boolean => {
      if (type === 0x4f || type === 0x45) {
        const capture = type === 0x4f ? stdout : stderr;
        const sink = type === 0x4f ? req.sinks?.stdout : req.sinks?.stderr;
        capture.push(payload);
        if (sink && !sink.destroyed && !sink.write(payload)) {
          sock.pause();
          sink.once('drain', () => sock.resume());
        }
      } else if (type === 0x58 && payload.length === 2) {
        exited = true;
        const value = payload[1] ?? 0;
        exitCode = payload[0] === 1 ? signalNumberToStatus(value) : value;
        if (note !== null) exitCode = signalNumberToStatus(constants.signals.SIGKILL);
        timers.push(setTimeout(() => finish(), DRAIN_GRACE_MS));
      } else if (type === 0x44) {
        finish();
        return false;
      } else if (type === 0x46) {
        finish(new Error(`the exec agent refused the command: ${payload.toString('utf8')}`));
        return false;
      } else {
        finish(new Error(`the exec agent sent an unknown frame type ${type}`));
        return false;
      }
      return true;
    };
    sock.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      while (!finished && buf.length >= 5) {
        const type = buf[0] ?? 0;
        const len = buf.readUInt32LE(1);
        if (len > MAX_FRAME) return finish(new Error(`the exec agent sent a ${len}-byte frame`));
        if (buf.length < 5 + len) return;
        const payload = buf.subarray(5, 5 + len);
        buf = buf.subarray(5 + len);
        if (!deliver(type, payload)) return;
      }
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      if (exited || status !== 'completed') finish();
      else finish(new Error('the exec agent closed the connection before the command exited'));
    });
    sock.write(request(req.argv, req.env, req.stdin));
    timers.push(
      setTimeout(() => {
        status = 'timed_out';
        kill();
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
              kill();
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
