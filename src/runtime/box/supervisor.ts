// Entry point of a managed-process supervisor: a detached process that owns one sandboxed process,
// keeps its stdio, serves the token-checked relay socket and records status, exit code and stderr.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, renameSync, rmSync, unlinkSync, writeFileSync, utimesSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { tryParseJson } from '../../core/json.js';
import { AcceptSchema, FRAME, FrameDecoder, HelloSchema, encodeFrame, tokensEqual } from './attach-protocol.js';
import { joinCgroup } from './limits.js';
import { exitStatus, stopEscalating } from '../process/stop.js';
import { identityOf } from '../process/identity.js';
import { signalPid } from '../process/group.js';
import {
  STDERR_PREVIEW_CHARS,
  SUPERVISOR_CONFIG_ENV,
  SUPERVISOR_TOKEN_ENV,
  SupervisorConfigSchema,
  type ProcessState,
  type SupervisorConfig,
} from './process-state.js';

const TERMINATE_GRACE_MS = 5000;
/** After SIGKILL, how long terminate waits for the exit to be recorded. */
const AFTER_KILL_MS = 1000;
const HELLO_TIMEOUT_MS = 5000;

/** Writes only into an existing directory: a removed session must not be re-created by a late write. */
function writeIfDirExists(file: string, text: string): void {
  if (!existsSync(path.dirname(file))) return;
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // session removed meanwhile
  }
}

class Supervisor {
  readonly #cfg: SupervisorConfig;
  readonly #token: string;
  #child: ChildProcess | null = null;
  #state: ProcessState;
  #stderrLines: string[] = [];
  #stderrLen = 0;
  #stderrPartial = '';
  #stderrTimer: NodeJS.Timeout | null = null;
  #client: net.Socket | null = null;
  #server: net.Server | null = null;
  #stdoutEnded = false;
  #finished = false;
  #lastTouch = 0;
  #markExited!: () => void;
  readonly #exitedPromise = new Promise<void>((resolve) => (this.#markExited = resolve));

  constructor(cfg: SupervisorConfig, token: string) {
    this.#cfg = cfg;
    this.#token = token;
    const me = identityOf(process.pid);
    this.#state = {
      session_id: cfg.session_id,
      process_id: cfg.process_id,
      supervisor: me ?? { pid: process.pid, start: '0', boot: 'unknown' },
      child_pid: null,
      status: 'running',
      command: cfg.command,
      args: cfg.args,
      cwd: cfg.cwd,
      env_keys: cfg.env_keys,
      attached: false,
      socket_path: cfg.socket_path,
      started_at: new Date().toISOString(),
      exited_at: null,
      exit_code: null,
    };
  }

  log(message: string): void {
    try {
      appendFileSync(this.#cfg.log_file, `${new Date().toISOString()} ${message}\n`);
    } catch {
      // nowhere to log
    }
  }

  #saveState(): void {
    writeIfDirExists(this.#cfg.state_file, `${JSON.stringify(this.#state)}\n`);
  }

  #touch(): void {
    const now = Date.now();
    if (now - this.#lastTouch < 1000) return;
    this.#lastTouch = now;
    try {
      utimesSync(this.#cfg.last_used_file, new Date(now), new Date(now));
    } catch {
      // session removed
    }
  }

  #onStderr(chunk: Buffer): void {
    const lines = (this.#stderrPartial + chunk.toString('utf8')).split('\n');
    this.#stderrPartial = (lines.pop() ?? '').slice(-STDERR_PREVIEW_CHARS);
    for (const raw of lines) this.#pushStderr(raw);
    this.#scheduleStderr();
  }

  #pushStderr(raw: string): void {
    const line = raw.replace(/\s+$/, '');
    if (!line) return;
    this.#stderrLines.push(line);
    this.#stderrLen += line.length + 1;
    while (this.#stderrLen > STDERR_PREVIEW_CHARS && this.#stderrLines.length > 1) this.#stderrLen -= (this.#stderrLines.shift()?.length ?? 0) + 1;
  }

  #flushStderr(): void {
    if (this.#stderrTimer) clearTimeout(this.#stderrTimer);
    this.#stderrTimer = null;
    writeIfDirExists(this.#cfg.stderr_file, this.#stderrLines.join('\n').slice(-STDERR_PREVIEW_CHARS));
  }

  #scheduleStderr(): void {
    this.#stderrTimer ??= setTimeout(() => this.#flushStderr(), 200);
  }

  async start(): Promise<void> {
    await this.#listen();
    const [cmd, ...args] = this.#cfg.argv;
    const child = spawn(cmd ?? 'false', args, {
      env: this.#cfg.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', ...(this.#cfg.gate ? (['pipe'] as const) : [])],
    });
    this.#child = child;
    child.on('error', (err) => {
      this.log(`spawn failed: ${err.message}`);
      this.#pushStderr(`lbot: could not start the process: ${err.message}`);
      this.#onExit(127);
    });
    if (child.pid && this.#cfg.gate) {
      const gate = child.stdio[3];
      gate?.on('error', () => undefined);
      try {
        joinCgroup(this.#cfg.cgroups, child.pid);
      } catch (err) {
        // Not in its cgroup means not started: kill it at the gate and report why (box.unavailable).
        signalPid(-child.pid, 'SIGKILL');
        gate?.destroy();
        const message = err instanceof Error ? err.message : String(err);
        this.log(`cgroup join failed: ${message}`);
        throw new Error(`[box.unavailable] ${message}`);
      }
      if (gate && 'end' in gate) gate.end('\n');
    }
    this.#state.child_pid = child.pid ?? null;
    child.stdin?.on('error', () => undefined);
    child.stderr?.on('data', (c: Buffer) => this.#onStderr(c));
    child.stdout?.pause();
    child.stdout?.on('data', (c: Buffer) => this.#onStdout(c));
    child.stdout?.on('end', () => {
      this.#stdoutEnded = true;
      this.#maybeFinish();
    });
    child.on('exit', (code, sig) => this.#onExit(exitStatus(code, sig)));
    try {
      writeFileSync(this.#cfg.busy_file, '');
    } catch {
      // session removed
    }
    this.#saveState();
    process.on('SIGTERM', () => void this.terminate());
    process.on('SIGINT', () => void this.terminate());
  }

  #onStdout(chunk: Buffer): void {
    const client = this.#client;
    if (!client || client.destroyed) {
      this.#child?.stdout?.pause();
      return;
    }
    this.#touch();
    if (!client.write(encodeFrame(FRAME.data, chunk))) {
      this.#child?.stdout?.pause();
      client.once('drain', () => this.#child?.stdout?.resume());
    }
  }

  #onExit(code: number | null): void {
    if (this.#state.status === 'exited') return;
    if (this.#stderrPartial) this.#pushStderr(this.#stderrPartial);
    this.#stderrPartial = '';
    this.#state.status = 'exited';
    this.#state.exit_code = code;
    this.#state.exited_at = new Date().toISOString();
    this.#markExited();
    this.#flushStderr();
    this.#saveState();
    rmSync(this.#cfg.busy_file, { force: true });
    try {
      utimesSync(this.#cfg.last_used_file, new Date(), new Date());
    } catch {
      // session removed
    }
    // Let an attached client read the rest of stdout; without one there is nobody to wait for.
    if (!this.#client) this.#stdoutEnded = true;
    else this.#child?.stdout?.resume();
    setTimeout(() => {
      this.#stdoutEnded = true;
      this.#maybeFinish();
    }, 2000).unref();
    this.#maybeFinish();
  }

  #maybeFinish(): void {
    if (this.#finished || this.#state.status !== 'exited' || !this.#stdoutEnded) return;
    this.#finished = true;
    const client = this.#client;
    if (client && !client.destroyed) client.end(encodeFrame(FRAME.exit, JSON.stringify({ exit_code: this.#state.exit_code })));
    this.#server?.close();
    try {
      unlinkSync(this.#cfg.socket_path);
    } catch {
      // already gone
    }
    setTimeout(() => process.exit(0), 200).unref();
  }

  /** Close stdin, SIGTERM the group at once, wait 5 s, SIGKILL the group (box.md §8.1 terminate). */
  async terminate(): Promise<void> {
    const child = this.#child;
    const pgid = child?.pid;
    if (!child || !pgid || this.#state.status === 'exited') {
      this.#onExit(this.#state.exit_code);
      return;
    }
    await stopEscalating({
      endInput: () => child.stdin?.end(),
      signal: (sig) => signalPid(-pgid, sig),
      exited: this.#exitedPromise,
      inputGraceMs: 0,
      graceMs: TERMINATE_GRACE_MS,
      afterKillMs: AFTER_KILL_MS,
    });
  }

  #listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      try {
        unlinkSync(this.#cfg.socket_path);
      } catch {
        // no stale socket
      }
      const server = net.createServer((sock) => this.#onConnection(sock));
      this.#server = server;
      server.on('error', reject);
      const old = process.umask(0o177);
      server.listen(this.#cfg.socket_path, () => {
        process.umask(old);
        chmodSync(this.#cfg.socket_path, 0o600);
        resolve();
      });
    });
  }

  #onConnection(sock: net.Socket): void {
    const decoder = new FrameDecoder();
    let accepted = false;
    const refuse = (code: string, message: string) => {
      const body = AcceptSchema.parse({ ok: false, error: { code, message } });
      sock.end(encodeFrame(FRAME.accept, JSON.stringify(body)));
      setTimeout(() => sock.destroy(), 1000).unref();
    };
    const timer = setTimeout(() => refuse('box.unauthenticated', 'no credentials received; the relay requires the session token'), HELLO_TIMEOUT_MS);
    sock.on('error', () => undefined);
    sock.on('data', (chunk: Buffer) => {
      let frames;
      try {
        frames = decoder.push(chunk);
      } catch {
        clearTimeout(timer);
        if (!accepted) refuse('box.unauthenticated', 'malformed relay handshake');
        else sock.destroy();
        return;
      }
      for (const f of frames) {
        if (!accepted) {
          clearTimeout(timer);
          const hello = f.type === FRAME.hello ? HelloSchema.safeParse(tryParseJson(f.payload.toString('utf8'))) : null;
          if (!hello?.success || !tokensEqual(hello.data.token, this.#token)) {
            refuse('box.unauthenticated', 'the relay refused the connection: missing or wrong session token');
            return;
          }
          if (this.#client && !this.#client.destroyed) {
            refuse('box.process_conflict', `managed process ${this.#cfg.process_id} is already attached`);
            return;
          }
          if (this.#state.status !== 'running') {
            refuse('box.process_conflict', `managed process ${this.#cfg.process_id} is not running (exit code ${this.#state.exit_code})`);
            return;
          }
          accepted = true;
          this.#client = sock;
          this.#state.attached = true;
          this.#saveState();
          sock.write(encodeFrame(FRAME.accept, JSON.stringify({ ok: true })));
          this.#child?.stdout?.resume();
          continue;
        }
        this.#touch();
        const stdin = this.#child?.stdin;
        if (f.type === FRAME.data && stdin && !stdin.destroyed) {
          if (!stdin.write(f.payload)) {
            sock.pause();
            stdin.once('drain', () => sock.resume());
          }
        } else if (f.type === FRAME.eof) stdin?.end();
      }
    });
    sock.on('close', () => {
      clearTimeout(timer);
      if (this.#client === sock) {
        this.#client = null;
        this.#state.attached = false;
        if (this.#state.status === 'running') this.#saveState();
        if (this.#state.status === 'running') this.#child?.stdout?.pause();
        else {
          this.#stdoutEnded = true;
          this.#maybeFinish();
        }
      }
    });
  }
}

async function main(): Promise<void> {
  const cfg = SupervisorConfigSchema.parse(tryParseJson(process.env[SUPERVISOR_CONFIG_ENV] ?? ''));
  const token = process.env[SUPERVISOR_TOKEN_ENV] ?? '';
  delete process.env[SUPERVISOR_TOKEN_ENV];
  const sup = new Supervisor(cfg, token);
  process.on('uncaughtException', (err) => sup.log(`uncaught: ${err.stack ?? err.message}`));
  await sup.start();
  // Tell the starter we are up; it closes its end of the pipe, and we never write to stdout again.
  process.stdout.on('error', () => undefined);
  process.stdout.write('ready\n');
}

main().catch((err: unknown) => {
  process.stdout.write(`error ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
