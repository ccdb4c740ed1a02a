// The HTTP bot of `lbot serve` on the LangBot HTTP-bot contract (docs/http-bot.md): POST /bots/{bot}
// answers 202 and the replies go to the account's callback URL; /sync answers with the replies; /reset
// starts the session over. Every request is signed with the account's secret; no bearer token.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { accountToken, type PlatformAccount } from '../../core/delivery/accounts.js';
import {
  HttpBotMessageSchema,
  HttpBotResetSchema,
  httpBotEnvelope,
  IDEMPOTENCY_HEADER,
  IDEMPOTENCY_TTL_S,
  sessionConversationId,
  SIGNATURE_HEADER,
  signatureProblem,
  TIMESTAMP_HEADER,
} from '../../core/delivery/http-bot.js';
import { LbotError } from '../../core/errors.js';
import { parseEnvelope } from '../../core/host/event-input.js';
import { messageText } from '../../core/host/result-normalizer.js';
import { parseOrThrow } from '../../core/zod-issue.js';
import { startEventRun, type EventRouterDeps } from './event-router.js';

export type HttpBotDeps = EventRouterDeps & { env: NodeJS.ProcessEnv; rawBody(req: FastifyRequest): string; nowS?(): number };

const BotParams = z.object({ bot: z.string().min(1).max(64) });
/** Printable ASCII without spaces, as HTTP header values allow and logs show unambiguously. */
const KeySchema = z.string().regex(/^[\x21-\x7e]{1,256}$/, 'must be 1-256 printable ASCII characters without spaces');

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * A queued run that ends without starting (cancelled, superseded, shutdown; docs/run-policy.md) ran nothing:
 * its key is released, so the backend's retry of the message is taken rather than refused as a duplicate.
 * (At shutdown the store may already be closed; the key then stays claimed until its TTL.)
 */
function releaseIfNeverStarted(deps: HttpBotDeps, bot: string, key: string, run_id: string): void {
  void deps.runs
    .outcome(run_id)
    ?.then((o) => {
      if (o.error?.details.never_started === true) deps.stores.delivery.releaseHttpKey(bot, key);
    })
    .catch(() => undefined);
}

export function registerHttpBotRoutes(app: FastifyInstance, deps: HttpBotDeps): void {
  const nowS = deps.nowS ?? (() => Math.floor(Date.now() / 1000));

  /** The http account named in the path, with the request's signature checked against its secret. */
  function verified(req: FastifyRequest): PlatformAccount {
    const { bot } = parseOrThrow(BotParams, req.params, 'path', '');
    const account = deps.config().platforms.find((a) => a.platform === 'http' && a.name === bot);
    if (!account)
      throw new LbotError('not_found', `no http bot ${bot} is configured`, {
        hint: 'lbot platform add NAME --platform http --token-env VAR --api-base CALLBACK_URL',
      });
    const secret = accountToken(account, deps.env);
    if (!secret) throw new LbotError('config.invalid', `http bot ${bot} has no signing secret (token_env)`);
    const why = signatureProblem({
      secret,
      timestamp: header(req, TIMESTAMP_HEADER),
      signature: header(req, SIGNATURE_HEADER),
      rawBody: deps.rawBody(req),
      nowS: nowS(),
    });
    if (why) throw new LbotError('unauthorized', `http bot ${bot} refused the request: ${why}`, { details: { bot } });
    return account;
  }

  /** Records the idempotency key and starts the run; a key seen before is a duplicate (409). */
  async function accept(req: FastifyRequest, sync: boolean): Promise<{ run_id: string; event_id: string; session_id: string }> {
    const account = verified(req);
    const message = parseOrThrow(HttpBotMessageSchema, req.body, 'http bot message', '(body)');
    const rawKey = header(req, IDEMPOTENCY_HEADER) ?? message.message_id;
    const key = rawKey === undefined ? null : parseOrThrow(KeySchema, rawKey, 'idempotency key', '');
    const generation = deps.stores.delivery.sessionGeneration(account.name, message.session_id);
    const envelope = parseEnvelope(
      httpBotEnvelope({ account, message, key, generation, nowS: nowS(), sync, uniqueId: randomUUID() }),
      'http bot message',
      deps.config().runs.max_event_data_bytes,
    );
    if (key !== null && !deps.stores.delivery.claimHttpKey(account.name, key, envelope.event_id, nowS(), IDEMPOTENCY_TTL_S))
      throw new LbotError('http_bot.duplicate', `http bot ${account.name}: message ${key} was already accepted`, {
        details: { bot: account.name, idempotency_key: key, event_id: envelope.event_id },
      });
    try {
      const run_id = await startEventRun(deps, envelope);
      if (key !== null) releaseIfNeverStarted(deps, account.name, key, run_id);
      return { run_id, event_id: envelope.event_id, session_id: message.session_id };
    } catch (err) {
      // Nothing ran: the caller's retry with the same key must be taken, not refused as a duplicate.
      if (key !== null) deps.stores.delivery.releaseHttpKey(account.name, key);
      throw err;
    }
  }

  app.post('/bots/:bot', async (req, reply) => reply.code(202).send({ ok: true, ...(await accept(req, false)) }));

  app.post('/bots/:bot/sync', async (req, reply) => {
    const accepted = await accept(req, true);
    const live = deps.runs.get(accepted.run_id);
    const outcome = await deps.runs.outcome(accepted.run_id);
    const fromLive = live?.items.flatMap((i) => (i.kind === 'delivered' && i.type === 'message.completed' ? [messageText(i.message) ?? ''] : [])) ?? null;
    const stored = await deps.stores.runs.get(accepted.run_id);
    const replies =
      fromLive ??
      (stored?.results ?? []).flatMap((r) => (r.type === 'message.completed' && typeof r.data.message.content === 'string' ? [r.data.message.content] : []));
    const status = outcome?.status ?? stored?.status ?? 'running';
    const error = outcome?.error ?? stored?.error ?? null;
    return reply.code(200).send({ ok: status === 'completed', ...accepted, status, error, replies: replies.map((message) => ({ message })) });
  });

  app.post('/bots/:bot/reset', async (req) => {
    const account = verified(req);
    const { session_id } = parseOrThrow(HttpBotResetSchema, req.body, 'http bot reset', '(body)');
    const generation = deps.stores.delivery.resetSession(account.name, session_id, nowS());
    return { ok: true, session_id, generation, conversation_id: sessionConversationId(account.name, session_id, generation) };
  });
}
