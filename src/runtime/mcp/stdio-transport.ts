// The SDK `Transport` for host stdio MCP servers: the server runs in its own process group with an
// allowlisted env, its stdout is framed with a size cap, its stderr is kept in a bounded tail, and
// close() escalates stdin EOF → SIGTERM → SIGKILL on the whole group, so no server process outlives lbot.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isRecord, tryParseJson } from '../../core/json.js';
import { FAMILY_ENV, adoptFamily, newFamily } from '../process/family.js';
import { signalGroup, trackGroup, untrackGroup } from '../process/group.js';
import { childEnv } from '../process/env.js';
import { StderrTail } from '../plugins/stderr-tail.js';
import { stopEscalating } from '../process/stop.js';
import { LineSplitter } from '../../core/protocol/index.js';
import { DirectToolCalls } from './direct-call.js';
import { LineTooLongError } from './errors.js';

export type StdioServerParams = {
  command: readonly string[];
  env: Record<string, string>;
  cwd?: string | null | undefined;
  hostEnv?: NodeJS.ProcessEnv;
  /** Grace after stdin EOF and after SIGTERM, each; default 1000 ms. */
  graceMs?: number;
  maxLineBytes?: number;
  onStderrLine?: (line: string) => void;
};

export type ServerExit = { code: number | null; signal: NodeJS.Signals | null };

/** Why the transport gave up on a server (the session turns it into an error phase and message). */
export class StdioTransportError extends Error {
  override name = 'StdioTransportError';
  constructor(
    message: string,
    readonly kind: 'spawn' | 'line_too_long' | 'stdin',
  ) {
    super(message);
  }
}

/** `node` means the Node.js running lbot, so a server behaves the same whatever PATH holds. */
export function resolveServerCommand(command: readonly string[]): { file: string; args: string[] } {
  const [first = '', ...args] = command;
  return { file: first === 'node' ? process.execPath : first, args };
}

type ServerProcess = ChildProcessByStdio<Writable, Readable, Readable>;

export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #params: StdioServerParams;
  readonly #lines: LineSplitter;
  readonly #stderr: StderrTail;
  #child: ServerProcess | null = null;
  #exit: ServerExit | null = null;
  #exited: Promise<ServerExit>;
  #resolveExit!: (exit: ServerExit) => void;
  #closing: Promise<void> | undefined;
  #started: Promise<void> | undefined;
  #closedNotified = false;
  /** Set when the transport itself decided to stop reading (oversized line), for the error message. */
  failure: StdioTransportError | null = null;
  /** tools/call on this channel without the SDK's per-message schema work (direct-call.ts). */
  readonly direct = new DirectToolCalls((message) => this.send(message));

  constructor(params: StdioServerParams) {
    this.#params = params;
    this.#lines = new LineSplitter({
      maxLineBytes: params.maxLineBytes,
      onLine: (line) => this.#onLine(line.toString('utf8')),
      onOverflow: () => this.#onOverflow(),
    });
    this.#stderr = new StderrTail(params.onStderrLine);
    this.#exited = new Promise((resolve) => (this.#resolveExit = resolve));
  }

  /** The process id (= process group id) once spawned. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /** Resolves when the server process has exited. */
  get exited(): Promise<ServerExit> {
    return this.#exited;
  }

  get exitInfo(): ServerExit | null {
    return this.#exit;
  }

  stderrTail(): string {
    return this.#stderr.text();
  }

  /** Spawns the server; a second call (the SDK's connect after the connector started it) returns the same promise. */
  start(): Promise<void> {
    return (this.#started ??= this.#spawn());
  }

  #spawn(): Promise<void> {
    const { file, args } = resolveServerCommand(this.#params.command);
    const cwd = this.#params.cwd ? path.resolve(this.#params.cwd) : process.cwd();
    const family = newFamily();
    const child = spawn(file, args, {
      cwd,
      env: childEnv('mcp', { ...this.#params.env, [FAMILY_ENV]: family }, this.#params.hostEnv),
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    this.#child = child;
    return new Promise((resolve, reject) => {
      child.once('error', (err) => {
        const failure = new StdioTransportError(`cannot start ${file}: ${err.message}`, 'spawn');
        this.failure ??= failure;
        reject(failure);
        this.#onExit({ code: null, signal: null });
      });
      child.once('spawn', () => {
        if (child.pid) adoptFamily(child.pid, family);
        if (child.pid) trackGroup(child.pid);
        resolve();
      });
      child.once('exit', (code, signal) => this.#onExit({ code, signal }));
      child.stdin.on(
        'error',
        (err) => this.#closing === undefined && !this.#exit && this.onerror?.(new StdioTransportError(`writing to the server failed: ${err.message}`, 'stdin')),
      );
      child.stdout.on('data', (chunk: Buffer) => this.#lines.push(chunk));
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (text: string) => this.#stderr.push(text));
    });
  }

  #onOverflow(): void {
    this.failure ??= new StdioTransportError(new LineTooLongError(this.#lines.maxLineBytes).message, 'line_too_long');
    this.#child?.stdout.destroy();
    this.onerror?.(this.failure);
    void this.close();
  }

  #onLine(line: string): void {
    if (line.trim() === '') return;
    const raw = tryParseJson(line);
    if (isRecord(raw) && this.direct.take(raw)) return;
    const parsed = JSONRPCMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.onerror?.(new Error(`ignored a line on stdout that is not a JSON-RPC message: ${JSON.stringify(line.slice(0, 120))}`));
      return;
    }
    this.onmessage?.(parsed.data);
  }

  #onExit(exit: ServerExit): void {
    if (this.#exit) return;
    this.#exit = exit;
    this.#stderr.flush();
    const pid = this.#child?.pid;
    // Children the server left behind in its group go with it.
    if (pid) {
      signalGroup(pid, 'SIGKILL');
      untrackGroup(pid);
    }
    this.#lines.stop();
    this.direct.close();
    this.#resolveExit(exit);
    if (!this.#closedNotified) {
      this.#closedNotified = true;
      this.onclose?.();
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin || this.#exit || stdin.destroyed) return Promise.reject(new Error('the MCP server is not running'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** Stops the server: stdin EOF, grace, SIGTERM to the group, grace, SIGKILL. Idempotent. */
  close(): Promise<void> {
    return (this.#closing ??= this.#stop());
  }

  async #stop(): Promise<void> {
    const child = this.#child;
    if (!child || this.#exit) return;
    const grace = this.#params.graceMs ?? 1000;
    await stopEscalating({
      endInput: () => {
        try {
          child.stdin.end();
        } catch {
          // the pipe is already gone
        }
      },
      signal: (sig) => {
        if (child.pid) signalGroup(child.pid, sig);
      },
      exited: this.#exited,
      graceMs: grace,
      afterKillMs: grace,
    });
  }
}
