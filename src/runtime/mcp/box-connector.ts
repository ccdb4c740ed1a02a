// Box-hosted stdio MCP servers (skills-mcp-tools.md §3.6, box.md §8.4): one persistent box session
// (`mcp-shared`; `mcp-test-<id>` for tests), the server's project staged into it, the server started as a
// managed process and its stdin/stdout reached through the box relay. Never falls back to the host (AC-155).
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { BoxConfig } from '../../core/config.js';
import { LineSplitter } from '../../core/protocol/index.js';
import { toLbotError } from '../../core/errors.js';
import { PROCESS_ID_PATTERN } from '../../core/box/model.js';
import { validateHostDir } from '../../core/box/mounts.js';
import type { Attachment } from '../box/attach-client.js';
import type { BoxService } from '../box/service.js';
import type { McpServerRecord } from './config.js';
import type { McpConnection, McpConnector } from './connectors.js';
import { LineTooLongError, McpPhaseError, type McpErrorPhase } from './errors.js';

export const SHARED_SESSION = 'mcp-shared';
const HEALTH_POLL_MS = 5000;
const HEALTH_MAX_ERRORS = 3;
const STAGE_MAX_BYTES = 256 * 1024 * 1024;
const STAGE_EXCLUDES = ['.git', '__pycache__', '.pytest_cache', '.mypy_cache', '.ruff_cache'];
const VENV_DIRS = new Set(['.venv', 'venv', 'env', '.env']);

export type BoxConnectorOptions = {
  dataDir: string;
  config: BoxConfig;
  owner: 'cli' | 'serve';
  warn(message: string): void;
};

/** The managed process id of a server: its uuid, else its name. */
export function processIdOf(record: McpServerRecord): string {
  const id = record.uuid ?? record.name;
  return PROCESS_ID_PATTERN.test(id)
    ? id
    : id
        .replace(/[^A-Za-z0-9_.-]/g, '_')
        .replace(/^[^A-Za-z0-9]+/, 'p')
        .slice(0, 64);
}

/** `<root>/.venv/bin` (and siblings) collapse to `<root>`. */
export function unwrapVenvPath(dir: string): string {
  const base = path.basename(dir);
  const parent = path.dirname(dir);
  if ((base === 'bin' || base === 'Scripts') && VENV_DIRS.has(path.basename(parent))) return path.dirname(parent);
  return dir;
}

/** The project directory to stage: the common parent of existing absolute command/arg paths, or null (also for `/`). */
export function inferHostPath(command: readonly string[]): string | null {
  const dirs: string[] = [];
  for (const part of command) {
    if (!path.isAbsolute(part) || !existsSync(part)) continue;
    let dir = statSync(part).isDirectory() ? part : path.dirname(part);
    dir = unwrapVenvPath(dir);
    dirs.push(path.resolve(dir));
  }
  if (dirs.length === 0) return null;
  let common = dirs[0] ?? '/';
  for (const d of dirs.slice(1)) {
    while (common !== '/' && d !== common && !d.startsWith(`${common}/`)) common = path.dirname(common);
  }
  return common === '/' ? null : common;
}

/** Rewrites host paths under `hostPath` to the staged mount; a host venv interpreter becomes plain `python`. */
export function rewriteCommand(command: readonly string[], hostPath: string, mount: string): string[] {
  const under = (p: string) => p === hostPath || p.startsWith(`${hostPath}/`);
  return command.map((part, i) => {
    if (!path.isAbsolute(part) || !under(part)) return part;
    if (
      i === 0 &&
      /^python[0-9.]*$/.test(path.basename(part)) &&
      path.dirname(part) !== hostPath &&
      VENV_DIRS.has(path.basename(path.dirname(path.dirname(part))))
    )
      return 'python';
    return path.posix.join(mount, path.relative(hostPath, part));
  });
}

/** Packs a directory with the host's tar (symlinks kept, caches left out). */
function tarDirectory(dir: string, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('tar', ['-c', ...STAGE_EXCLUDES.map((e) => `--exclude=${e}`), '-C', dir, '.'], { stdio: ['ignore', 'pipe', 'pipe'], signal });
    const chunks: Buffer[] = [];
    let size = 0;
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      size += c.length;
      if (size > STAGE_MAX_BYTES) {
        child.kill('SIGKILL');
        reject(new Error(`the project directory ${dir} is larger than ${STAGE_MAX_BYTES / 1024 / 1024} MiB`));
        return;
      }
      chunks.push(c);
    });
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`tar failed (exit ${code}): ${err.trim().slice(0, 300)}`))));
  });
}

/** The SDK transport over a managed process's relay attachment, with the 5 s health poll of §3.3. */
class BoxAttachTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  failure: string | null = null;
  exitCode: number | null | undefined = undefined;
  readonly #lines = new LineSplitter({ onLine: (line) => this.#onLine(line.toString('utf8')), onOverflow: () => this.#onOverflow() });
  #closed = false;
  #timer: NodeJS.Timeout | null = null;
  #errors = 0;

  constructor(
    readonly attachment: Attachment,
    readonly exited: () => boolean,
  ) {}

  async start(): Promise<void> {
    this.attachment.on('data', (chunk) => this.#lines.push(chunk));
    this.attachment.on('exit', (code) => {
      this.exitCode = code;
      this.#finish();
    });
    this.attachment.on('close', () => this.#finish());
    this.attachment.socket.on('error', (err) => this.onerror?.(err));
    this.#timer = setInterval(() => {
      let gone: boolean;
      try {
        gone = this.exited();
        this.#errors = 0;
      } catch {
        this.#errors += 1;
        gone = this.#errors >= HEALTH_MAX_ERRORS;
      }
      if (gone) this.#finish();
    }, HEALTH_POLL_MS);
    this.#timer.unref();
  }

  #onOverflow(): void {
    const err = new LineTooLongError(this.#lines.maxLineBytes);
    this.failure = err.message;
    this.onerror?.(err);
    void this.close();
  }

  #onLine(line: string): void {
    if (line.trim() === '') return;
    try {
      this.onmessage?.(deserializeMessage(line));
    } catch {
      this.onerror?.(new Error(`ignored a line on stdout that is not a JSON-RPC message: ${JSON.stringify(line.slice(0, 120))}`));
    }
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.attachment.detach();
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) throw new Error('the box-hosted MCP server is not attached');
    if (!this.attachment.write(serializeMessage(message))) await new Promise<void>((resolve) => this.attachment.socket.once('drain', () => resolve()));
  }

  async close(): Promise<void> {
    this.#finish();
  }
}

function phaseError(phase: McpErrorPhase, what: string, err: unknown): McpPhaseError {
  const e = toLbotError(err);
  if (e.code === 'box.unavailable') return new McpPhaseError('box_unavailable', `box_unavailable: ${e.message}`, { cause: err });
  return new McpPhaseError(phase, `${what}: ${e.message}`, { cause: err });
}

/** The connector for `--in-box` servers. The box service is opened on first use. */
export function createBoxConnector(opts: BoxConnectorOptions): McpConnector {
  let box: Promise<BoxService> | undefined;
  const service = () =>
    (box ??= import('../box/service.js').then((m) => m.createBoxService({ dataDir: opts.dataDir, config: opts.config, owner: opts.owner, warn: opts.warn })));
  return async (record, { signal, transient }) => {
    if (!opts.config.enabled) {
      throw new McpPhaseError(
        'box_unavailable',
        `box_disabled_in_config: MCP server ${record.name} runs in the box (--in-box), but the box is disabled (box.enabled = false); it is never started on the host`,
      );
    }
    const b = await service();
    const status = await b.status();
    if (!status.available)
      throw new McpPhaseError(
        'box_unavailable',
        `box_unavailable: ${status.connector_error ?? 'no sandbox backend is usable'}; MCP server ${record.name} is never started on the host`,
      );
    const processId = processIdOf(record);
    const sessionId = transient ? `mcp-test-${processId}`.slice(0, 128) : SHARED_SESSION;
    const boxOpts = record.box;
    // Every exec on the session repeats its spec: a different spec would be a session conflict.
    const sessionSpec = {
      session_id: sessionId,
      network: boxOpts.network,
      persistent: true,
      read_only_rootfs: boxOpts.read_only_rootfs ?? false,
      env: boxOpts.env,
      ...(boxOpts.image ? { image: boxOpts.image } : {}),
      ...(boxOpts.cpus ? { cpus: boxOpts.cpus } : {}),
      ...(boxOpts.memory_mb ? { memory_mb: boxOpts.memory_mb } : {}),
      ...(boxOpts.pids_limit ? { pids_limit: boxOpts.pids_limit } : {}),
    };
    try {
      await b.run({ ...sessionSpec, cmd: 'true' }, { internal: true, signal });
    } catch (err) {
      throw phaseError('session_create', `cannot create box session ${sessionId} for MCP server ${record.name}`, err);
    }
    const staged = `/workspace/.mcp/${processId}/workspace`;
    let command = [...(record.command ?? [])];
    let cwd = '/workspace';
    const hostPath = boxOpts.host_path ?? inferHostPath(command);
    if (hostPath) {
      try {
        const real = validateHostDir(hostPath, b.policy, 'box.host_path');
        const tar = await tarDirectory(real, signal);
        await b.run(
          { ...sessionSpec, cmd: `rm -rf '/workspace/.mcp/${processId}' && mkdir -p '${staged}' && tar -x -C '${staged}'` },
          { internal: true, stdin: tar, signal },
        );
        command = rewriteCommand(command, real, staged);
        cwd = staged;
      } catch (err) {
        throw phaseError('session_create', `cannot stage ${hostPath} for MCP server ${record.name}`, err);
      }
    }
    const [file = '', ...args] = command;
    try {
      await b.startProcess(sessionId, { process_id: processId, command: file, args, env: record.env, cwd }, { replace: true });
    } catch (err) {
      throw phaseError('process_start', `cannot start MCP server ${record.name} in box session ${sessionId}`, err);
    }
    const cleanup = async () => {
      await b.stopProcess(sessionId, processId).catch(() => undefined);
      await b.run({ ...sessionSpec, cmd: `rm -rf '/workspace/.mcp/${processId}'` }, { internal: true }).catch(() => undefined);
      if (transient) await b.removeSession(sessionId).catch(() => undefined);
    };
    let attachment: Attachment;
    try {
      attachment = await b.attach(sessionId, processId);
    } catch (err) {
      await cleanup();
      throw phaseError('relay_connect', `cannot attach to MCP server ${record.name} in box session ${sessionId}`, err);
    }
    const exited = () => b.processStatus(sessionId, processId).status === 'exited';
    const transport = new BoxAttachTransport(attachment, exited);
    const stderr = () => {
      try {
        return b.processStatus(sessionId, processId).stderr_preview;
      } catch {
        return '';
      }
    };
    const conn: McpConnection = {
      transport,
      pid: null,
      stderrTail: stderr,
      exitNote: () => (transport.exitCode === undefined ? null : `exited with code ${transport.exitCode ?? 'unknown'}`),
      transportFailure: () => transport.failure,
      handshakePhase: 'mcp_init',
      box: { session_id: sessionId, process_id: processId },
      dispose: cleanup,
    };
    return conn;
  };
}
