// Client side of the managed-process relay: authenticate with the session token, then bridge bytes.
import net from 'node:net';
import { EventEmitter } from 'node:events';
import { tryParseJson } from '../../core/json.js';
import { LbotError } from '../../core/errors.js';
import { AcceptSchema, ExitSchema, FRAME, FrameDecoder, encodeFrame } from './attach-protocol.js';

export type AttachEvents = { data: [Buffer]; exit: [number | null]; close: [] };

/** A live attachment: `write` feeds the process's stdin, `end` closes it, `detach` leaves it running. */
export class Attachment extends EventEmitter<AttachEvents> {
  constructor(readonly socket: net.Socket) {
    super();
  }
  write(data: Buffer | string): boolean {
    return this.socket.write(encodeFrame(FRAME.data, typeof data === 'string' ? Buffer.from(data) : data));
  }
  /** Sends end-of-input: the process's stdin is closed. */
  end(): void {
    this.socket.write(encodeFrame(FRAME.eof));
  }
  detach(): void {
    this.socket.end();
  }
}

/** Connects to a managed process's relay socket; refusals become LbotErrors with the relay's code. */
export function attachToSocket(socketPath: string, token: string, processId: string): Promise<Attachment> {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection(socketPath);
    const decoder = new FrameDecoder();
    let attachment: Attachment | null = null;
    let settled = false;
    const fail = (err: LbotError) => {
      if (settled) return;
      settled = true;
      sock.destroy();
      reject(err);
    };
    sock.on('connect', () => sock.write(encodeFrame(FRAME.hello, JSON.stringify({ token, process_id: processId }))));
    sock.on('error', (err) => {
      if (!settled) fail(new LbotError('box.process_not_found', `cannot reach managed process ${processId}: ${err.message}`));
    });
    sock.on('data', (chunk: Buffer) => {
      let frames;
      try {
        frames = decoder.push(chunk);
      } catch (err) {
        sock.destroy();
        return fail(new LbotError('box.unauthenticated', `the relay sent a malformed frame: ${err instanceof Error ? err.message : String(err)}`));
      }
      for (const f of frames) {
        if (!attachment) {
          const accept = f.type === FRAME.accept ? AcceptSchema.safeParse(tryParseJson(f.payload.toString('utf8'))) : null;
          if (!accept?.success) return fail(new LbotError('box.unauthenticated', 'the relay answered with an unexpected frame'));
          if (!accept.data.ok) {
            const code = accept.data.error.code === 'box.process_conflict' ? 'box.process_conflict' : 'box.unauthenticated';
            return fail(new LbotError(code, accept.data.error.message));
          }
          attachment = new Attachment(sock);
          settled = true;
          resolve(attachment);
          continue;
        }
        if (f.type === FRAME.data) attachment.emit('data', f.payload);
        else if (f.type === FRAME.exit) {
          const exit = ExitSchema.safeParse(tryParseJson(f.payload.toString('utf8')));
          attachment.emit('exit', exit.success ? exit.data.exit_code : null);
        }
      }
    });
    sock.on('close', () => {
      if (!settled) fail(new LbotError('box.unauthenticated', 'the relay closed the connection during the handshake'));
      else attachment?.emit('close');
    });
  });
}

/**
 * Connects a terminal to an attachment until the relay closes: input feeds the process's stdin
 * (end of input closes it), its output goes to `output`, both honouring backpressure; `signal`
 * detaches and leaves the process running. Resolves with the process's exit code, or null when
 * it was still running.
 */
export function pumpAttachment(
  conn: Attachment,
  io: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream; signal: AbortSignal },
): Promise<number | null> {
  const { input, output, signal } = io;
  return new Promise((resolve) => {
    let exitCode: number | null = null;
    const onData = (chunk: Buffer | string): void => {
      if (!conn.write(chunk)) {
        input.pause();
        conn.socket.once('drain', () => input.resume());
      }
    };
    const onEnd = (): void => conn.end();
    const onAbort = (): void => conn.detach();
    input.on('data', onData);
    input.on('end', onEnd);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    conn.on('data', (b) => {
      if (!output.write(b)) {
        conn.socket.pause();
        output.once('drain', () => conn.socket.resume());
      }
    });
    conn.on('exit', (code) => {
      exitCode = code;
    });
    conn.on('close', () => {
      input.off('data', onData);
      input.off('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      input.pause();
      resolve(exitCode);
    });
  });
}
