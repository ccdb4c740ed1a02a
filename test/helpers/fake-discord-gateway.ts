// A local Discord gateway, strict where lbot relies on it (Discord's gateway docs): HELLO first, then
// only IDENTIFY (token, intents with MESSAGE_CONTENT, properties) or RESUME (known session, a sequence it
// has seen) before anything else; heartbeats carry the last sequence; wrong frames close the socket
// with Discord's close codes. Serves GET /api/v10/gateway/bot and passes other HTTP requests on to
// `restUrl` (a fake of the REST API), so one api_base serves both.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export const BOT_USER_ID = '1200000000000000001';
const GUILD_MESSAGES = 1 << 9;
const MESSAGE_CONTENT = 1 << 15;

type Frame = { op: number; d?: unknown; s?: number | null; t?: string | null };
type SessionState = { id: string; seq: number; dispatches: Array<{ s: number; t: string; d: unknown }> };
type Conn = { ws: WebSocket; n: number; session: SessionState | null; lastBeatSeq: number | null };

export type FakeGateway = {
  /** The REST base to configure as the account's api_base (`…/api/v10`). */
  apiBase: string;
  /** What clients sent, per connection number, in order. */
  received: Array<{ conn: number; op: number; d: unknown }>;
  /** Protocol rules a client broke (the socket was closed for each). Empty for a good client. */
  violations: string[];
  connections(): number;
  /** The close code of each connection that ended, as the server saw it. */
  closes: number[];
  /** Sends a dispatch on the live connection, or keeps it for the resume when none is open. */
  dispatch(t: string, d: unknown): number;
  /** op 7: asks the client to reconnect and resume. */
  reconnect(): void;
  /** Drops the TCP connection without a close frame (the client sees 1006). */
  drop(): void;
  /** op 9 with d = resumable. */
  invalidSession(resumable: boolean): void;
  /** While true, heartbeats are not ACKed (a zombie connection). */
  holdAcks(hold: boolean): void;
  close(): Promise<void>;
};

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export async function startFakeGateway(opts: { token: string; heartbeatMs?: number; restUrl?: string }): Promise<FakeGateway> {
  const heartbeatMs = opts.heartbeatMs ?? 45_000;
  const sessions = new Map<string, SessionState>();
  const received: FakeGateway['received'] = [];
  const violations: string[] = [];
  const closes: number[] = [];
  let live: Conn | null = null;
  let lastSession: SessionState | null = null;
  let connCount = 0;
  let holdingAcks = false;
  let port = 0;

  const http = createServer((req, res) => void handleHttp(req, res));
  async function handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.url === '/api/v10/gateway/bot' && req.method === 'GET') {
      if (req.headers.authorization !== `Bot ${opts.token}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"message": "401: Unauthorized", "code": 0}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          url: `ws://127.0.0.1:${port}/gateway`,
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
        }),
      );
      return;
    }
    if (!opts.restUrl) {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const upstream = await fetch(`${opts.restUrl}${req.url ?? ''}`, { method: req.method ?? 'GET', headers, ...(body ? { body } : {}) });
    const out: Record<string, string> = {};
    upstream.headers.forEach((v, k) => {
      if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') out[k] = v;
    });
    res.writeHead(upstream.status, out).end(Buffer.from(await upstream.arrayBuffer()));
  }

  const wss = new WebSocketServer({ noServer: true });
  http.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/gateway') {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      connCount += 1;
      const conn: Conn = { ws, n: connCount, session: null, lastBeatSeq: null };
      const refuse = (code: number, why: string) => {
        violations.push(`conn ${conn.n}: ${why}`);
        ws.close(code, why.slice(0, 120));
      };
      if (url.searchParams.get('v') !== '10') return refuse(4012, `gateway version ${url.searchParams.get('v')}, expected 10`);
      if (url.searchParams.get('encoding') !== 'json') return refuse(4002, 'encoding is not json');
      live = conn;
      ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: heartbeatMs }, s: null, t: null }));
      ws.on('close', (code) => {
        closes.push(code);
        if (live === conn) live = null;
      });
      ws.on('message', (data, isBinary) => {
        let f: Frame;
        try {
          const parsed: unknown = JSON.parse(isBinary ? '' : String(data));
          if (!isObj(parsed) || typeof parsed.op !== 'number') throw new Error('no op');
          f = { op: parsed.op, d: parsed.d };
        } catch {
          return refuse(4002, 'a frame that is not a JSON gateway payload');
        }
        received.push({ conn: conn.n, op: f.op, d: f.d });
        switch (f.op) {
          case 1: {
            // d is the last sequence the client received: null, or one this session has sent (a dispatch may cross it in flight).
            const sent = conn.session ? conn.session.seq : 0;
            if (f.d !== null && (typeof f.d !== 'number' || f.d > sent || f.d < (conn.lastBeatSeq ?? 0)))
              return refuse(4002, `heartbeat d ${JSON.stringify(f.d)}, last sequence sent is ${sent}`);
            conn.lastBeatSeq = typeof f.d === 'number' ? f.d : null;
            if (!holdingAcks) ws.send(JSON.stringify({ op: 11 }));
            return;
          }
          case 2: {
            if (conn.session) return refuse(4005, 'identify on an identified connection');
            const d = isObj(f.d) ? f.d : {};
            if (d.token !== opts.token) return refuse(4004, 'identify with a wrong token');
            if (typeof d.intents !== 'number' || (d.intents & GUILD_MESSAGES) === 0) return refuse(4013, 'intents without GUILD_MESSAGES');
            if ((d.intents & MESSAGE_CONTENT) === 0) return refuse(4014, 'intents without MESSAGE_CONTENT');
            const p = isObj(d.properties) ? d.properties : {};
            if (typeof p.os !== 'string' || typeof p.browser !== 'string' || typeof p.device !== 'string')
              return refuse(4002, 'identify properties need os, browser and device');
            const session: SessionState = { id: `sess-${sessions.size + 1}`, seq: 0, dispatches: [] };
            sessions.set(session.id, session);
            conn.session = session;
            lastSession = session;
            session.seq += 1;
            ws.send(
              JSON.stringify({
                op: 0,
                s: session.seq,
                t: 'READY',
                d: {
                  v: 10,
                  session_id: session.id,
                  resume_gateway_url: `ws://127.0.0.1:${port}/gateway`,
                  user: { id: BOT_USER_ID, bot: true, username: 'lbot' },
                },
              }),
            );
            return;
          }
          case 6: {
            if (conn.session) return refuse(4005, 'resume on an identified connection');
            const d = isObj(f.d) ? f.d : {};
            if (d.token !== opts.token) return refuse(4004, 'resume with a wrong token');
            const session = typeof d.session_id === 'string' ? sessions.get(d.session_id) : undefined;
            if (!session) return refuse(4006, `resume of unknown session ${String(d.session_id)}`);
            if (typeof d.seq !== 'number' || d.seq > session.seq) return refuse(4007, `resume at sequence ${String(d.seq)}, last sent is ${session.seq}`);
            conn.session = session;
            for (const x of session.dispatches.filter((x) => x.s > Number(d.seq))) ws.send(JSON.stringify({ op: 0, s: x.s, t: x.t, d: x.d }));
            session.seq += 1;
            ws.send(JSON.stringify({ op: 0, s: session.seq, t: 'RESUMED', d: {} }));
            return;
          }
          default:
            if (!conn.session) return refuse(4003, `op ${f.op} before identify`);
            return refuse(4001, `unknown opcode ${f.op}`);
        }
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  port = (http.address() as AddressInfo).port;

  return {
    apiBase: `http://127.0.0.1:${port}/api/v10`,
    received,
    violations,
    connections: () => connCount,
    closes,
    dispatch(t, d) {
      const session = live?.session ?? lastSession;
      if (!session) throw new Error('no session to dispatch on');
      session.seq += 1;
      session.dispatches.push({ s: session.seq, t, d });
      if (live?.session === session) live.ws.send(JSON.stringify({ op: 0, s: session.seq, t, d }));
      return session.seq;
    },
    reconnect: () => live?.ws.send(JSON.stringify({ op: 7, d: null })),
    drop: () => live?.ws.terminate(),
    invalidSession: (resumable) => live?.ws.send(JSON.stringify({ op: 9, d: resumable })),
    holdAcks(hold) {
      holdingAcks = hold;
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      await new Promise((r) => http.close(r));
    },
  };
}

/** A MESSAGE_CREATE `d` as Discord sends it in a guild channel. */
export function messageCreate(id: string, content: string, author: { id: string; bot?: boolean } = { id: '1300000000000000001' }) {
  return {
    id,
    channel_id: '1400000000000000001',
    guild_id: '1500000000000000001',
    author: { id: author.id, username: 'ann', discriminator: '0', global_name: 'Ann', ...(author.bot ? { bot: true } : {}) },
    content,
    timestamp: '2026-12-02T10:00:00.000000+00:00',
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
    type: 0,
  };
}
