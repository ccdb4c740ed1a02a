// `lbot serve --discord-gateway`: one Discord gateway connection per Discord account (WebSocket, `ws`):
// identify, heartbeat, resume after a drop; MESSAGE_CREATE dispatches become runs (docs/delivery.md).
import WebSocket from 'ws';
import { accountApiBase, accountBotId, accountToken, type PlatformAccount } from '../../core/delivery/accounts.js';
import {
  afterClose,
  closeReason,
  GatewayBotSchema,
  GatewayFrameSchema,
  gatewayUrl,
  heartbeatFrame,
  HelloSchema,
  identifyFrame,
  OP,
  ReadySchema,
  resumeFrame,
  type GatewayFrame,
} from '../../core/delivery/discord-gateway.js';
import { LbotError } from '../../core/errors.js';
import { normalizePlatformPayload } from '../../core/gateway/index.js';
import { isRecord, tryParseJson } from '../../core/json.js';
import type { HostStores } from '../stores/open.js';
import { exchange } from './http.js';

const MAX_BACKOFF_MS = 30_000;
/** Gateway frames are at most 4096 bytes from clients; dispatches can be larger, but not this large. */
const MAX_FRAME_BYTES = 8 * 1024 * 1024;

export type DiscordGatewayOptions = {
  account: PlatformAccount;
  stores: HostStores;
  env: NodeJS.ProcessEnv;
  /** Parses and starts the run of one envelope (throws the coded refusal). */
  route(envelope: unknown, raw: unknown): Promise<string>;
  warn(message: string): void;
  log?(line: string): void;
};

type Session = { id: string; resumeUrl: string | null; seq: number | null };

export class DiscordGateway {
  #closed = false;
  #loop: Promise<void> | null = null;
  #ws: WebSocket | null = null;
  #session: Session | null = null;
  #selfId: string | null = null;
  #wake: (() => void) | null = null;
  /** Dispatches are handed on one at a time, in the order Discord sent them. */
  #handling: Promise<void> = Promise.resolve();

  constructor(private readonly o: DiscordGatewayOptions) {}

  start(): void {
    // Fails serve at start on a missing token instead of warning forever.
    accountToken(this.o.account, this.o.env);
    this.#loop ??= this.#run();
  }

  async close(): Promise<void> {
    this.#closed = true;
    // 1000 ends the session on Discord's side: the bot goes offline at once.
    this.#ws?.close(1000);
    this.#wake?.();
    await this.#loop;
    await this.#handling;
  }

  #token(): string {
    return accountToken(this.o.account, this.o.env) ?? '';
  }

  #redact(text: string): string {
    const token = this.o.account.token_env ? this.o.env[this.o.account.token_env] : undefined;
    return token ? text.split(token).join('****') : text;
  }

  async #sleep(ms: number): Promise<void> {
    if (this.#closed) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
    this.#wake = null;
  }

  /** GET /gateway/bot: where to connect (Discord hands out the URL; it is not fixed). */
  async #gatewayBase(): Promise<string> {
    const res = await exchange({
      method: 'GET',
      url: `${accountApiBase(this.o.account)}/gateway/bot`,
      headers: { authorization: `Bot ${this.#token()}` },
      body: '',
    }).catch((err: unknown) => {
      throw new LbotError('runtime_error', `GET /gateway/bot failed: ${err instanceof Error ? err.message : String(err)}`, { retryable: true });
    });
    if (res.status === 401) throw new LbotError('unauthorized', 'GET /gateway/bot answered 401: the bot token is wrong');
    const got = GatewayBotSchema.safeParse(res.json);
    if (res.status !== 200 || !got.success) throw new LbotError('runtime_error', `GET /gateway/bot answered ${res.status}`, { retryable: true });
    return got.data.url;
  }

  async #run(): Promise<void> {
    const name = this.o.account.name;
    let failures = 0;
    while (!this.#closed) {
      let code: number;
      try {
        const base = this.#session?.resumeUrl ?? (await this.#gatewayBase());
        const r = await this.#connectOnce(base);
        code = r.code;
        if (r.ready) failures = 0;
      } catch (err) {
        if (this.#closed) return;
        if (err instanceof LbotError && !err.retryable) {
          this.o.warn(`discord gateway (${name}): ${this.#redact(err.message)}; not reconnecting`);
          return;
        }
        this.o.warn(`discord gateway (${name}): ${this.#redact(err instanceof Error ? err.message : String(err))}; retrying`);
        code = -1;
      }
      if (this.#closed) return;
      const next = code === -1 ? 'resume' : afterClose(code);
      if (next === 'stop') {
        this.o.warn(`discord gateway (${name}): closed by Discord: ${closeReason(code)}; not reconnecting`);
        return;
      }
      if (next === 'identify') this.#session = null;
      failures += 1;
      // The first reconnect is at once (Discord asks for it with op 7); repeated failures back off.
      if (failures > 1) await this.#sleep(Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(failures - 2, 5)) * (0.5 + Math.random() / 2));
    }
  }

  /** One WebSocket connection, until it closes: its close code, and whether it got READY or RESUMED. */
  #connectOnce(base: string): Promise<{ code: number; ready: boolean }> {
    const name = this.o.account.name;
    return new Promise((resolve) => {
      const ws = new WebSocket(gatewayUrl(base), { maxPayload: MAX_FRAME_BYTES, handshakeTimeout: 15_000 });
      this.#ws = ws;
      let heartbeat: NodeJS.Timeout | null = null;
      let acked = true;
      let ready = false;
      const send = (frame: unknown) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
      };
      const beat = () => {
        // No ACK since the last heartbeat: the connection is a zombie; drop it and resume.
        if (!acked) {
          this.o.log?.(`discord gateway (${name}): no heartbeat ACK; reconnecting`);
          ws.terminate();
          return;
        }
        acked = false;
        send(heartbeatFrame(this.#session?.seq ?? null));
      };
      const onFrame = (frame: GatewayFrame) => {
        if (typeof frame.s === 'number' && this.#session) this.#session.seq = frame.s;
        switch (frame.op) {
          case OP.HELLO: {
            const hello = HelloSchema.safeParse(frame.d);
            if (!hello.success) {
              ws.close(4000);
              return;
            }
            const interval = hello.data.heartbeat_interval;
            // The first heartbeat after interval * jitter, so a fleet of clients does not beat in step.
            heartbeat = setTimeout(() => {
              beat();
              heartbeat = setInterval(beat, interval);
            }, interval * Math.random());
            const s = this.#session;
            send(s ? resumeFrame(this.#token(), s.id, s.seq) : identifyFrame(this.#token(), process.platform));
            return;
          }
          case OP.HEARTBEAT:
            send(heartbeatFrame(this.#session?.seq ?? null));
            return;
          case OP.HEARTBEAT_ACK:
            acked = true;
            return;
          case OP.RECONNECT:
            ws.close(4000);
            return;
          case OP.INVALID_SESSION:
            // d: whether the session can be resumed; if not, identify afresh.
            if (frame.d !== true) this.#session = null;
            ws.close(4000);
            return;
          case OP.DISPATCH:
            return this.#dispatch(frame, () => (ready = true));
          default:
            return;
        }
      };
      ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
        const text = isBinary ? '' : Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : '';
        const frame = GatewayFrameSchema.safeParse(tryParseJson(text));
        if (!frame.success) {
          this.o.warn(`discord gateway (${name}): a frame that is not a gateway payload; reconnecting`);
          ws.close(4000);
          return;
        }
        onFrame(frame.data);
      });
      ws.on('error', (err: Error) => this.o.log?.(`discord gateway (${name}): ${this.#redact(err.message)}`));
      ws.on('close', (code: number) => {
        if (heartbeat) clearTimeout(heartbeat);
        if (heartbeat) clearInterval(heartbeat);
        this.#ws = null;
        resolve({ code, ready });
      });
    });
  }

  #dispatch(frame: GatewayFrame, markReady: () => void): void {
    const name = this.o.account.name;
    if (frame.t === 'READY') {
      const r = ReadySchema.safeParse(frame.d);
      if (!r.success) return;
      this.#session = { id: r.data.session_id, resumeUrl: r.data.resume_gateway_url ?? null, seq: frame.s ?? null };
      this.#selfId = r.data.user.id;
      markReady();
      this.o.log?.(`discord gateway (${name}): ready, session ${r.data.session_id}`);
      return;
    }
    if (frame.t === 'RESUMED') {
      markReady();
      this.o.log?.(`discord gateway (${name}): resumed`);
      return;
    }
    if (frame.t !== 'MESSAGE_CREATE') return;
    // The bot's own messages (its replies) and other bots' never start a run: no reply loops.
    const author = isRecord(frame.d) && isRecord(frame.d.author) ? frame.d.author : null;
    if (!author || author.bot === true || author.id === this.#selfId) return;
    this.#handling = this.#handling.then(() => this.#handle(frame));
  }

  async #handle(frame: GatewayFrame): Promise<void> {
    const name = this.o.account.name;
    try {
      const result = normalizePlatformPayload('discord', frame, { receivedAt: Math.floor(Date.now() / 1000), botId: accountBotId(this.o.account) });
      if (result.kind !== 'event') return;
      // A dispatch replayed on resume that already started a run is not run twice.
      if ((await this.o.stores.events.findByEventId(result.envelope.event_id)).length > 0) return;
      const runId = await this.o.route(result.envelope, result.raw);
      this.o.log?.(`discord gateway (${name}): ${result.envelope.event_type} → run ${runId}`);
    } catch (err) {
      this.o.warn(`discord gateway (${name}): message skipped: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
