// Attach over the box API: a WebSocket per attachment to a managed process. Binary messages carry the
// process's stdin (to the server) and stdout (to the caller); text messages carry `{"type":"eof"}` (close its
// stdin) and `{"type":"exit","exit_code":N}`. Closing the socket detaches and leaves the process running.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { z } from 'zod';
import { LbotError } from '../../../core/errors.js';
import { REMOTE_BOX_PREFIX } from '../../../core/box/remote-wire.js';
import { tryParseJson } from '../../../core/json.js';
import { httpError } from '../../server/http-errors.js';
import { bearerMatches } from '../../server/token.js';
import type { BoxService } from '../service.js';

/** `/v1/box/sessions/:id/processes/:pid/attach` (ids percent-encoded; the service checks them). */
const ATTACH_PATH = new RegExp(`^${REMOTE_BOX_PREFIX}/sessions/([^/]+)/processes/([^/]+)/attach$`);

export const AttachControlSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('eof') }),
  z.strictObject({ type: z.literal('exit'), exit_code: z.number().int().nullable() }),
]);

/** Output waiting to be sent beyond which the process's stdout is not read (like an unread pipe). */
const HIGH_WATER_BYTES = 1024 * 1024;

function refuse(socket: Duplex, err: unknown): void {
  const { status, body } = httpError(err);
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Refused'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n${status === 401 ? 'WWW-Authenticate: Bearer\r\n' : ''}Connection: close\r\n\r\n${text}`,
  );
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function bridge(ws: WebSocket, att: Awaited<ReturnType<BoxService['attach']>>): void {
  att.on('data', (chunk) => {
    ws.send(chunk, { binary: true }, () => {
      if (ws.bufferedAmount < HIGH_WATER_BYTES) att.socket.resume();
    });
    if (ws.bufferedAmount >= HIGH_WATER_BYTES) att.socket.pause();
  });
  att.on('exit', (code) => ws.send(JSON.stringify({ type: 'exit', exit_code: code })));
  att.on('close', () => ws.close(1000, 'process relay closed'));
  ws.on('message', (data: RawData, isBinary: boolean) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data);
    if (isBinary) {
      if (!att.write(bytes)) {
        ws.pause();
        att.socket.once('drain', () => ws.resume());
      }
      return;
    }
    const control = AttachControlSchema.safeParse(tryParseJson(bytes.toString('utf8')));
    if (control.success && control.data.type === 'eof') att.end();
    else ws.close(1008, 'unknown control message');
  });
  ws.on('close', () => att.detach());
  ws.on('error', () => att.detach());
}

/** Serves attach upgrades on the API's server: token first, then the session and process as the service checks them. */
export function registerAttachWs(app: FastifyInstance, opts: { box: BoxService; token: string; maxPayload: number; logger?: FastifyBaseLogger }): void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxPayload });
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => socket.destroy());
    const route = (req.url ?? '').split('?')[0] ?? '';
    const m = ATTACH_PATH.exec(route);
    if (!m?.[1] || !m[2]) return refuse(socket, new LbotError('not_found', `no WebSocket route ${route}`));
    if (!bearerMatches(req.headers.authorization, opts.token)) {
      const reason = req.headers.authorization ? 'wrong_token' : 'missing_token';
      opts.logger?.warn(
        { event: 'auth.refused', method: 'GET', path: route, remote: req.socket.remoteAddress, reason },
        'refused: missing or wrong bearer token',
      );
      return refuse(socket, new LbotError('unauthorized', `missing or wrong bearer token for attach`, { details: { reason } }));
    }
    opts.box.attach(decode(m[1]), decode(m[2])).then(
      (att) => wss.handleUpgrade(req, socket, head, (ws) => bridge(ws, att)),
      (err: unknown) => refuse(socket, err),
    );
  };
  app.server.on('upgrade', onUpgrade);
  app.addHook('onClose', async () => {
    app.server.off('upgrade', onUpgrade);
    for (const ws of wss.clients) ws.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
}
