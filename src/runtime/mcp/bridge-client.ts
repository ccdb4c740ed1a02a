// `lbot mcp bridge --run RUN_ID`: connects to the host's bridge socket with the run's token, then joins
// stdin/stdout to it, so an external MCP client talks to the host's per-run MCP server.
import net from 'node:net';
import { LbotError } from '../../core/errors.js';
import { tryParseJson } from '../../core/json.js';
import { BridgeReplySchema } from './bridge-server.js';

export type BridgeClientOptions = {
  runId: string;
  socket: string | undefined;
  token: string | undefined;
  warn(message: string): void;
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
};

const HINT = 'a runner gets both from ctx.metadata.mcp_bridge (env LBOT_BRIDGE_SOCKET and LBOT_BRIDGE_TOKEN) and passes them to the harness it starts';

/** Opens the bridge: resolves with the socket once the host accepted the run id and token. */
export function openBridge(socketPath: string, runId: string, token: string): Promise<{ socket: net.Socket; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath);
    let buffered = Buffer.alloc(0);
    let settled = false;
    const fail = (err: LbotError) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      reject(err);
    };
    socket.on('connect', () => socket.write(`${JSON.stringify({ run_id: runId, token })}\n`));
    socket.on('error', (err) =>
      fail(new LbotError('not_found', `no live lbot host at ${socketPath} (${err.message}); the run ${runId} has ended or its host stopped`, { hint: HINT })),
    );
    socket.on('close', () => fail(new LbotError('unauthorized', `the lbot host closed the bridge for run ${runId} before accepting it`)));
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const nl = buffered.indexOf(0x0a);
      if (nl === -1) return;
      socket.off('data', onData);
      const reply = BridgeReplySchema.safeParse(tryParseJson(buffered.subarray(0, nl).toString('utf8')));
      if (!reply.success) return fail(new LbotError('runtime_error', 'the lbot host answered the bridge hello with something unexpected'));
      if (!reply.data.ok) {
        const code = reply.data.error.code === 'unauthorized' ? 'unauthorized' : 'invalid_argument';
        return fail(new LbotError(code, reply.data.error.message, { hint: HINT }));
      }
      settled = true;
      socket.removeAllListeners('close');
      socket.removeAllListeners('error');
      resolve({ socket, rest: buffered.subarray(nl + 1) });
    };
    socket.on('data', onData);
  });
}

/** Runs the bridge until either side closes. Refusals throw (unauthorized → exit 4, no host → exit 3). */
export async function runBridgeClient(opts: BridgeClientOptions): Promise<void> {
  if (!opts.socket) throw new LbotError('invalid_argument', 'no bridge socket: pass --socket or set LBOT_BRIDGE_SOCKET', { hint: HINT });
  if (!opts.token) throw new LbotError('invalid_argument', 'no bridge token: set LBOT_BRIDGE_TOKEN', { hint: HINT });
  const { socket, rest } = await openBridge(opts.socket, opts.runId, opts.token);
  const stdin = opts.stdin ?? process.stdin;
  const stdout = opts.stdout ?? process.stdout;
  if (rest.length > 0) stdout.write(rest);
  await new Promise<void>((resolve) => {
    socket.on('error', (err) => opts.warn(`MCP bridge: ${err.message}`));
    socket.on('close', () => {
      stdin.unpipe(socket);
      resolve();
    });
    stdin.on('end', () => socket.end());
    socket.pipe(stdout, { end: false });
    stdin.pipe(socket);
  });
  // The host ends the connection when the run ends; stdin may still be open, so let go of it.
  if ('destroy' in stdin && typeof stdin.destroy === 'function') stdin.destroy();
}
