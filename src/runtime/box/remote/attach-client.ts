// The caller's side of attach on a remote box: a WebSocket to the box server, with the events and methods of
// a local attachment (data, exit, close; write, end, detach).
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import WebSocket, { type RawData } from 'ws';
import { LbotError } from '../../../core/errors.js';
import { tryParseJson } from '../../../core/json.js';
import type { AttachEvents } from '../attach-client.js';
import { AttachControlSchema } from './attach-ws.js';

/** A live attachment to a managed process on a remote box. */
export class RemoteAttachment extends EventEmitter<AttachEvents> {
  constructor(readonly ws: WebSocket) {
    super();
  }
  write(data: Buffer | string): boolean {
    this.ws.send(typeof data === 'string' ? Buffer.from(data) : data, { binary: true });
    return this.ws.bufferedAmount < 1024 * 1024;
  }
  /** Sends end-of-input: the process's stdin is closed. */
  end(): void {
    this.ws.send(JSON.stringify({ type: 'eof' }));
  }
  /** Leaves the process running. */
  detach(): void {
    this.ws.close(1000, 'detached');
  }
}

function bytesOf(data: RawData): Buffer {
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data);
}

/** Opens the WebSocket; a refusal before the upgrade rejects with `refusal(status, body)`, a network error with `network(err)`. */
export function openRemoteAttachment(
  url: string,
  headers: Record<string, string>,
  opts: { ca?: Buffer; refusal(status: number, text: string): LbotError; network(err: unknown): LbotError },
): Promise<RemoteAttachment> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, ...(opts.ca ? { ca: opts.ca } : {}) });
    let att: RemoteAttachment | null = null;
    ws.on('unexpected-response', (_req, res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => reject(opts.refusal(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'))));
      res.on('error', (err) => reject(opts.network(err)));
    });
    ws.on('error', (err) => {
      if (!att) reject(opts.network(err));
    });
    ws.on('open', () => {
      att = new RemoteAttachment(ws);
      resolve(att);
    });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (!att) return;
      const bytes = bytesOf(data);
      if (isBinary) return void att.emit('data', bytes);
      const control = AttachControlSchema.safeParse(tryParseJson(bytes.toString('utf8')));
      if (control.success && control.data.type === 'exit') att.emit('exit', control.data.exit_code);
    });
    ws.on('close', () => att?.emit('close'));
  });
}
