// Local fakes of the platform APIs lbot replies on, as strict as the real ones where lbot relies on
// them: auth header, required fields, size limits, ids. Each can be told to misbehave (429 with its
// retry hint, 500, a dropped connection) for the next requests.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

export type Sent = { method: string; path: string; body: Record<string, unknown>; at: number };
type Misbehaviour = { kind: '429'; retryAfterS: number } | { kind: '500' } | { kind: 'drop' } | { kind: 'hang' };

export type FakePlatform = {
  url: string;
  /** Requests the fake accepted as messages (or edits), in order. */
  sent: Sent[];
  /** Every request that reached a route, accepted or not. */
  requests: Sent[];
  /** The next `n` requests to a message route get `m` instead of being served. */
  misbehave(m: Misbehaviour, n?: number): void;
  close(): Promise<void>;
};

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

async function serve(register: (app: FastifyInstance, h: Hooks) => void): Promise<FakePlatform> {
  const app = Fastify({ logger: false, forceCloseConnections: true });
  const sent: Sent[] = [];
  const requests: Sent[] = [];
  const queue: Misbehaviour[] = [];
  const hooks: Hooks = {
    sent,
    requests,
    /** Applies a queued misbehaviour; true when the request was answered by it. */
    async intercept(req, reply, rateLimited) {
      requests.push({ method: req.method, path: req.url, body: isObj(req.body) ? req.body : {}, at: Date.now() });
      const m = queue.shift();
      if (!m) return false;
      if (m.kind === '429') await rateLimited(reply, m.retryAfterS);
      else if (m.kind === '500') await reply.code(500).send('internal error');
      else if (m.kind === 'drop') req.raw.socket.destroy();
      else await new Promise(() => undefined);
      return true;
    },
  };
  register(app, hooks);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    sent,
    requests,
    misbehave(m, n = 1) {
      for (let i = 0; i < n; i++) queue.push(m);
    },
    close: () => app.close(),
  };
}

type Hooks = {
  sent: Sent[];
  requests: Sent[];
  intercept(req: FastifyRequest, reply: FastifyReply, rateLimited: (reply: FastifyReply, s: number) => Promise<unknown>): Promise<boolean>;
};
const record = (h: Hooks, req: FastifyRequest, body: Record<string, unknown>) => h.sent.push({ method: req.method, path: req.url, body, at: Date.now() });

/** Slack Web API: bearer bot token, JSON body, `channel` and `text` (at most 40,000 characters); 429 with Retry-After. */
export function fakeSlack(token: string): Promise<FakePlatform> {
  let ts = 1700000000;
  return serve((app, h) => {
    const handler = (needTs: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
      if (await h.intercept(req, reply, (r, s) => r.code(429).header('retry-after', String(s)).send({ ok: false, error: 'ratelimited' }))) return;
      if (req.headers.authorization !== `Bearer ${token}`) return reply.send({ ok: false, error: req.headers.authorization ? 'invalid_auth' : 'not_authed' });
      const b = req.body;
      if (!isObj(b) || typeof b.channel !== 'string' || !b.channel) return reply.send({ ok: false, error: 'channel_not_found' });
      if (typeof b.text !== 'string' || b.text === '') return reply.send({ ok: false, error: 'no_text' });
      if (b.text.length > 40000) return reply.send({ ok: false, error: 'msg_too_long' });
      if (b.thread_ts !== undefined && typeof b.thread_ts !== 'string') return reply.send({ ok: false, error: 'invalid_arguments' });
      if (needTs && typeof b.ts !== 'string') return reply.send({ ok: false, error: 'message_not_found' });
      record(h, req, b);
      return reply.send({ ok: true, channel: b.channel, ts: needTs ? b.ts : `${ts++}.000100` });
    };
    app.post('/api/chat.postMessage', handler(false));
    app.post('/api/chat.update', handler(true));
  });
}

/** Discord REST v10: `Bot` token, content of 1–2000 characters, nonce ≤ 25 characters deduplicated with enforce_nonce. */
export async function fakeDiscord(token: string): Promise<FakePlatform & { allowInteraction(applicationId: string, interactionToken: string): void }> {
  let id = 1100000000000000000n;
  const byNonce = new Map<string, string>();
  /** Interaction webhooks that exist: `<application id>/<interaction token>`, with their original response's id. */
  const interactions = new Map<string, string>();
  const platform = await serve((app, h) => {
    const limited = (r: FastifyReply, s: number) =>
      r
        .code(429)
        .header('retry-after', String(Math.ceil(s)))
        .send({ message: 'You are being rate limited.', retry_after: s, global: false });
    const check = (req: FastifyRequest, reply: FastifyReply): Record<string, unknown> | null => {
      if (req.headers.authorization !== `Bot ${token}`) {
        void reply.code(401).send({ message: '401: Unauthorized', code: 0 });
        return null;
      }
      const b = req.body;
      if (!isObj(b) || typeof b.content !== 'string' || b.content.length === 0 || b.content.length > 2000) {
        void reply.code(400).send({ message: 'Invalid Form Body', code: 50035 });
        return null;
      }
      return b;
    };
    app.post<{ Params: { channel: string } }>('/api/v10/channels/:channel/messages', async (req, reply) => {
      if (await h.intercept(req, reply, limited)) return;
      const b = check(req, reply);
      if (!b) return;
      if (b.nonce !== undefined && (typeof b.nonce !== 'string' || b.nonce.length > 25))
        return reply.code(400).send({ message: 'Invalid Form Body', code: 50035 });
      const nonce = typeof b.nonce === 'string' && b.enforce_nonce === true ? b.nonce : null;
      const existing = nonce ? byNonce.get(nonce) : undefined;
      if (existing) return reply.send({ id: existing, channel_id: req.params.channel, content: b.content });
      const mid = String(id++);
      if (nonce) byNonce.set(nonce, mid);
      record(h, req, b);
      return reply.send({ id: mid, channel_id: req.params.channel, content: b.content });
    });
    app.patch<{ Params: { channel: string; id: string } }>('/api/v10/channels/:channel/messages/:id', async (req, reply) => {
      if (await h.intercept(req, reply, limited)) return;
      const b = check(req, reply);
      if (!b) return;
      record(h, req, b);
      return reply.send({ id: req.params.id, channel_id: req.params.channel, content: b.content });
    });
    // Interaction webhooks: authorized by the token in the path alone; 10015 Unknown Webhook otherwise.
    const hookBody = (req: FastifyRequest<{ Params: { app: string; token: string } }>, reply: FastifyReply): Record<string, unknown> | null => {
      if (!interactions.has(`${req.params.app}/${req.params.token}`)) {
        void reply.code(404).send({ message: 'Unknown Webhook', code: 10015 });
        return null;
      }
      if (req.headers.authorization !== undefined) {
        void reply.code(400).send({ message: 'interaction webhooks take no Authorization header here', code: 50035 });
        return null;
      }
      const b = req.body;
      if (!isObj(b) || typeof b.content !== 'string' || b.content.length === 0 || b.content.length > 2000) {
        void reply.code(400).send({ message: 'Invalid Form Body', code: 50035 });
        return null;
      }
      return b;
    };
    app.post<{ Params: { app: string; token: string } }>('/api/v10/webhooks/:app/:token', async (req, reply) => {
      if (await h.intercept(req, reply, limited)) return;
      const b = hookBody(req, reply);
      if (!b) return;
      record(h, req, b);
      return reply.send({ id: String(id++), content: b.content });
    });
    app.patch<{ Params: { app: string; token: string; id: string } }>('/api/v10/webhooks/:app/:token/messages/:id', async (req, reply) => {
      if (await h.intercept(req, reply, limited)) return;
      const b = hookBody(req, reply);
      if (!b) return;
      record(h, req, b);
      const original = interactions.get(`${req.params.app}/${req.params.token}`) ?? '';
      return reply.send({ id: req.params.id === '@original' ? original : req.params.id, content: b.content });
    });
  });
  return {
    ...platform,
    allowInteraction(applicationId, interactionToken) {
      interactions.set(`${applicationId}/${interactionToken}`, String(id++));
    },
  };
}

/** Lark IM v1: tenant access token from app id and secret, text content as a JSON string, uuid deduplication. */
export function fakeLark(appId: string, appSecret: string): Promise<FakePlatform> {
  const tenant = `t-${Math.random().toString(36).slice(2)}`;
  let mid = 1;
  const byUuid = new Map<string, string>();
  return serve((app, h) => {
    app.post('/open-apis/auth/v3/tenant_access_token/internal', async (req, reply) => {
      const b = req.body;
      if (!isObj(b) || b.app_id !== appId || b.app_secret !== appSecret) return reply.send({ code: 10014, msg: 'app secret invalid' });
      return reply.send({ code: 0, msg: 'ok', tenant_access_token: tenant, expire: 7200 });
    });
    const send = async (req: FastifyRequest, reply: FastifyReply) => {
      if (
        await h.intercept(req, reply, (r, s) =>
          r.code(429).header('x-ogw-ratelimit-reset', String(s)).send({ code: 99991400, msg: 'request trigger frequency limit' }),
        )
      )
        return;
      if (req.headers.authorization !== `Bearer ${tenant}`) return reply.code(400).send({ code: 99991663, msg: 'Invalid access token for authorization' });
      const b = req.body;
      if (!isObj(b) || b.msg_type !== 'text' || typeof b.content !== 'string') return reply.code(400).send({ code: 230001, msg: 'invalid message content' });
      let content: unknown;
      try {
        content = JSON.parse(b.content);
      } catch {
        return reply.code(400).send({ code: 230001, msg: 'content is not JSON' });
      }
      if (!isObj(content) || typeof content.text !== 'string') return reply.code(400).send({ code: 230001, msg: 'content.text missing' });
      if (b.uuid !== undefined && (typeof b.uuid !== 'string' || b.uuid.length > 50))
        return reply.code(400).send({ code: 99992402, msg: 'field validation failed: uuid' });
      const seen = typeof b.uuid === 'string' ? byUuid.get(b.uuid) : undefined;
      if (seen) return reply.send({ code: 0, msg: 'success', data: { message_id: seen } });
      const id = `om_${mid++}`;
      if (typeof b.uuid === 'string') byUuid.set(b.uuid, id);
      record(h, req, b);
      return reply.send({ code: 0, msg: 'success', data: { message_id: id } });
    };
    app.post('/open-apis/im/v1/messages/:id/reply', send);
    app.post('/open-apis/im/v1/messages', async (req, reply) => {
      const q = isObj(req.query) ? req.query : {};
      if (q.receive_id_type !== 'chat_id' || !isObj(req.body) || typeof req.body.receive_id !== 'string')
        return reply.code(400).send({ code: 230001, msg: 'receive_id missing' });
      return send(req, reply);
    });
    app.put('/open-apis/im/v1/messages/:id', send);
  });
}

/** OneBot v11 HTTP API: send_msg with an access token, message_type and the matching numeric id, message segments. */
export function fakeOneBot(accessToken: string | null): Promise<FakePlatform> {
  let mid = 1000;
  return serve((app, h) => {
    app.post('/send_msg', async (req, reply) => {
      if (await h.intercept(req, reply, (r) => r.code(429).send({ status: 'failed', retcode: 1400 }))) return;
      if (accessToken !== null && req.headers.authorization !== `Bearer ${accessToken}`) return reply.code(req.headers.authorization ? 403 : 401).send();
      const b = req.body;
      if (!isObj(b) || (b.message_type !== 'group' && b.message_type !== 'private')) return reply.send({ status: 'failed', retcode: 100, data: null });
      const id = b.message_type === 'group' ? b.group_id : b.user_id;
      if (typeof id !== 'number' || !Number.isSafeInteger(id)) return reply.send({ status: 'failed', retcode: 100, data: null });
      if (!Array.isArray(b.message) || !b.message.every((s) => isObj(s) && typeof s.type === 'string' && isObj(s.data)))
        return reply.send({ status: 'failed', retcode: 100, data: null });
      record(h, req, b);
      return reply.send({ status: 'ok', retcode: 0, data: { message_id: mid++ } });
    });
  });
}

/**
 * The Telegram Bot API where telegram-test-api is lenient: 429 with parameters.retry_after, and
 * getUpdates with real offset semantics (updates below the offset are confirmed and gone).
 */
export function fakeTelegram(
  token: string,
): Promise<FakePlatform & { push(update: Record<string, unknown>): void; getUpdatesCalls(): Array<Record<string, unknown>> }> {
  let mid = 1;
  const updates: Array<Record<string, unknown> & { update_id: number }> = [];
  let nextUpdate = 500;
  const calls: Array<Record<string, unknown>> = [];
  const waiting: Array<() => void> = [];
  return serve((app, h) => {
    app.post<{ Params: { token: string } }>('/bot:token/sendMessage', async (req, reply) => {
      if (
        await h.intercept(req, reply, (r, s) =>
          r.code(429).send({ ok: false, error_code: 429, description: `Too Many Requests: retry after ${s}`, parameters: { retry_after: s } }),
        )
      )
        return;
      if (req.params.token !== token) return reply.code(401).send({ ok: false, error_code: 401, description: 'Unauthorized' });
      const b = req.body;
      if (!isObj(b) || (typeof b.chat_id !== 'number' && typeof b.chat_id !== 'string'))
        return reply.code(400).send({ ok: false, error_code: 400, description: 'Bad Request: chat_id is empty' });
      if (typeof b.text !== 'string' || b.text.length === 0)
        return reply.code(400).send({ ok: false, error_code: 400, description: 'Bad Request: message text is empty' });
      if (b.text.length > 4096) return reply.code(400).send({ ok: false, error_code: 400, description: 'Bad Request: message is too long' });
      record(h, req, b);
      return reply.send({
        ok: true,
        result: { message_id: mid++, chat: { id: b.chat_id, type: 'private' }, date: Math.floor(Date.now() / 1000), text: b.text },
      });
    });
    app.post<{ Params: { token: string } }>('/bot:token/answerCallbackQuery', async (req, reply) => {
      if (req.params.token !== token) return reply.code(401).send({ ok: false, error_code: 401, description: 'Unauthorized' });
      const b = req.body;
      if (!isObj(b) || typeof b.callback_query_id !== 'string' || b.callback_query_id === '')
        return reply
          .code(400)
          .send({ ok: false, error_code: 400, description: 'Bad Request: query is too old and response timeout expired or query ID is invalid' });
      if (b.text !== undefined && (typeof b.text !== 'string' || b.text.length > 200))
        return reply.code(400).send({ ok: false, error_code: 400, description: 'Bad Request: text is too long' });
      record(h, req, b);
      return reply.send({ ok: true, result: true });
    });
    app.post<{ Params: { token: string } }>('/bot:token/getUpdates', async (req, reply) => {
      if (req.params.token !== token) return reply.code(401).send({ ok: false, error_code: 401, description: 'Unauthorized' });
      const b = isObj(req.body) ? req.body : {};
      calls.push(b);
      const offset = typeof b.offset === 'number' ? b.offset : null;
      // Confirming: every update below the offset is forgotten, as on the real server.
      if (offset !== null) for (let i = updates.length - 1; i >= 0; i--) if ((updates[i]?.update_id ?? 0) < offset) updates.splice(i, 1);
      const limit = typeof b.limit === 'number' ? b.limit : 100;
      const timeout = typeof b.timeout === 'number' ? Math.min(b.timeout, 2) : 0;
      if (updates.length === 0 && timeout > 0) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, timeout * 1000);
          waiting.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
      return reply.send({ ok: true, result: updates.slice(0, limit) });
    });
  }).then((f) => ({
    ...f,
    push(update: Record<string, unknown>) {
      updates.push({ ...update, update_id: nextUpdate++ });
      for (const w of waiting.splice(0)) w();
    },
    getUpdatesCalls: () => calls,
  }));
}
