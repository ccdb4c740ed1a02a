// The HTTP API of `lbot serve` on fastify: bearer auth on /v1/*, runs, events, webhooks, result streams
// (NDJSON and SSE) and store reads. No endpoint evaluates caller-supplied code (AC-214).
import { PassThrough } from 'node:stream';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Config } from '../../core/config.js';
import { LbotError } from '../../core/errors.js';
import { dispatch, type NamedBinding } from '../../core/host/dispatch.js';
import { parseEnvelope } from '../../core/host/event-input.js';
import { publicArtifact } from '../../core/host/api/artifacts.js';
import { isRecord } from '../../core/json.js';
import { createRedeliveryFilter, normalizePlatformPayload, PlatformChoiceSchema } from '../../core/gateway/index.js';
import { BindingSchema, type Binding } from '../../core/protocol/binding.js';
import type { EventEnvelope } from '../../core/protocol/event.js';
import type { HostStores } from '../stores/open.js';
import { StateScopeSchema } from '../../core/protocol/binding.js';
import { sendHttpError } from './http-errors.js';
import { registerAdminRoutes, type AdminDeps } from './admin-routes.js';
import { registerDeliveryRoutes } from './delivery-routes.js';
import { registerHttpBotRoutes } from './http-bot-routes.js';
import { startEventRun } from './event-router.js';
import { registerScheduleRoutes } from './schedule-routes.js';
import type { StreamItem } from './run-manager.js';
import type { RunGateway } from './run-gateway.js';
import { bearerMatches } from './token.js';
import { hasWebhookAuth, verifyWebhook } from './webhook-auth.js';
import { parseOrThrow } from '../../core/zod-issue.js';
import { deliveredLine, observedLine, summaryLine, type ResultLine } from '../../core/protocol/result-line.js';

export type ServerDeps = {
  stores: HostStores;
  runs: RunGateway;
  /** Current config (bindings are re-read on every event so `lbot binding add` takes effect). */
  config(): Config;
  token: string;
  bodyLimitBytes?: number;
  log?(line: string): void;
  /** The operator log: fastify logs through it (one `request` record per answered request). */
  logger?: FastifyBaseLogger | undefined;
  /** Refusals worth an operator's eye (a body asking for a process env); default: none. */
  warn?(message: string): void;
  /** Where secrets named in the config are read (HTTP bot signing secrets); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Box, skill and MCP routes (absent in tests that serve runs only). */
  admin?: AdminDeps;
};

const RunBodySchema = z.strictObject({
  event: z.unknown(),
  runner_id: z.string().min(1).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  /** A binding configured on the server, by id (its env comes from the operator's config). */
  binding_id: z.string().min(1).optional(),
  binding: z.unknown().optional(),
  raw: z.unknown().optional(),
});

/**
 * Binding fields an HTTP caller may not set inline: they choose what the unsandboxed plugin process
 * is started with (its environment) or which plugins may serve the run. Configure such a binding
 * and name it by `binding_id` instead.
 */
const PROCESS_FIELDS = ['env', 'bound_plugins'] as const;

/** An inline binding of POST /v1/runs: data fields only (runner, runner config, policies, filters). */
const HttpBindingSchema = BindingSchema.omit({ env: true, bound_plugins: true });

function inlineBinding(value: unknown, warn: (message: string) => void): Binding {
  if (isRecord(value)) {
    const field = PROCESS_FIELDS.find((f) => f in value);
    if (field) {
      warn(`POST /v1/runs refused: the body's binding carries ${field}`);
      throw new LbotError(
        'invalid_argument',
        `POST /v1/runs: binding.${field} is not accepted over HTTP: it would choose how the runner's plugin process is started`,
        {
          details: { path: ['binding', field] },
          hint: 'configure the binding on the server (lbot binding add) and send {"binding_id": ID}',
        },
      );
    }
  }
  return { ...parseWith(HttpBindingSchema, value, 'binding'), env: {}, bound_plugins: null };
}

const PageQuerySchema = z.object({
  conversation: z.string().optional(),
  type: z.string().optional(),
  limit: z.coerce.number().int().positive().optional(),
  before: z.coerce.number().int().optional(),
  after: z.coerce.number().int().optional(),
});

// Query schemas are built once: zod compiles a schema on its first parse, which per request costs more than the parse.
const WaitQuerySchema = z.object({ wait: z.enum(['1', 'true']).optional() });
const BotQuerySchema = z.object({ bot_id: z.string().min(1).optional() });
const ArtifactListQuerySchema = z.object({ run: z.string().optional(), limit: z.coerce.number().int().positive().optional() });
const StateQuerySchema = z.object({
  runner: z.string().optional(),
  binding: z.string().optional(),
  scope: StateScopeSchema.optional(),
  limit: z.coerce.number().int().positive().optional(),
});
const ArtifactReadQuerySchema = z.object({ offset: z.coerce.number().int().min(0).default(0), length: z.coerce.number().int().positive().optional() });

const parseWith = <S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> => parseOrThrow(schema, value, what, '(body)');

/** How often the record of a run running elsewhere is read when no change notification came. */
const FOLLOW_POLL_MS = 1000;

function streamLine(item: StreamItem): ResultLine {
  switch (item.kind) {
    case 'delivered':
      return deliveredLine(item);
    case 'observed':
      return observedLine(item.run_id, item.notice);
    case 'summary':
      return summaryLine(item.outcome);
  }
}

// Over 100 lines because it is the route table: one registration per endpoint, each a few lines over the
// same deps; policy lives elsewhere (dispatch, http-errors, webhook-auth, token, admin-routes).
export function buildServer(deps: ServerDeps): FastifyInstance {
  const common = { bodyLimit: deps.bodyLimitBytes ?? 4 * 1024 * 1024, forceCloseConnections: true, return503OnClosing: true } as const;
  // Fastify's own per-request pair of records is replaced by one `request` record when the answer is sent.
  const app: FastifyInstance = deps.logger
    ? Fastify({ ...common, loggerInstance: deps.logger, logController: new LogController({ disableRequestLogging: true }) })
    : Fastify({ ...common, logger: false });
  const redelivery = createRedeliveryFilter({ now: () => Date.now() });
  // Webhook signatures are computed over the exact bytes received, so JSON bodies keep their raw text.
  const rawBodies = new WeakMap<object, string>();
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    rawBodies.set(req, text);
    void parseJson(req, text, done);
  });
  const webhookAuth = () => deps.config().serve.webhooks;

  const warn = deps.warn ?? (() => undefined);
  // Routes and hooks throw; this is the one place that renders an error (status from the error table).
  app.setErrorHandler((err: unknown, req, reply) => {
    if (err instanceof LbotError && err.code === 'env.denied') warn(`${req.method} ${req.url.split('?')[0] ?? ''} refused: ${err.message}`);
    return sendHttpError(reply, err);
  });
  app.setNotFoundHandler((req) => {
    throw new LbotError('not_found', `no route ${req.method} ${req.url.split('?')[0] ?? ''}`);
  });

  if (deps.logger) {
    app.addHook('onResponse', async (req, reply) => {
      // The path only: query strings may carry ids an operator log need not keep; headers (the token) never.
      const record = {
        event: 'request',
        method: req.method,
        path: req.url.split('?')[0] ?? '',
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime),
      };
      if (req.routeOptions.url === '/healthz') req.log.debug(record, 'request');
      else req.log.info(record, 'request');
    });
  }

  app.addHook('onRequest', async (req: FastifyRequest) => {
    if (!deps.logger) deps.log?.(`${req.method} ${req.url.split('?')[0] ?? ''}`);
    // Unknown paths answer 404 with or without a token (AC-214); known /v1 routes need the token.
    if (!req.routeOptions.url?.startsWith('/v1/')) return;
    // A platform with a configured verifier signs its webhook calls instead (checked in the route).
    const params = isRecord(req.params) ? req.params : {};
    if (req.routeOptions.url === '/v1/webhooks/:platform' && typeof params.platform === 'string' && hasWebhookAuth(webhookAuth(), params.platform)) return;
    if (!bearerMatches(req.headers.authorization, deps.token)) throw new LbotError('unauthorized', 'missing or wrong bearer token');
  });

  // Nothing is answered before what it reports is durable (the stores' commit window, docs/host.md).
  app.addHook('onSend', async () => {
    await deps.stores.commit();
  });
  app.get('/healthz', async () => ({ ok: true }));
  if (deps.admin) registerAdminRoutes(app, deps.admin);
  registerDeliveryRoutes(app, deps.stores.delivery);
  registerScheduleRoutes(app, deps);
  registerHttpBotRoutes(app, {
    stores: deps.stores,
    runs: deps.runs,
    config: deps.config,
    env: deps.env ?? process.env,
    rawBody: (req) => rawBodies.get(req) ?? '',
  });

  /** A binding of the server's config by id; unknown or disabled ids are binding.not_found. */
  function configuredBinding(id: string): Binding {
    const found = deps.config().bindings.find((b) => b.binding_id === id && b.enabled);
    if (!found)
      throw new LbotError('binding.not_found', `no enabled binding ${id} is configured`, {
        details: { binding_id: id },
        hint: 'lbot binding list shows the configured bindings',
      });
    return found;
  }

  /** Runs one envelope on the binding the config picks; no match still records the event (AC-174). */
  async function routeEvent(envelope: EventEnvelope, raw: unknown, reply: FastifyReply): Promise<FastifyReply> {
    // `run_ids` stays a list: the answer's shape does not depend on the dispatch policy.
    return reply.code(202).send({ run_ids: [await startEventRun(deps, envelope, raw)] });
  }

  app.post('/v1/runs', async (req, reply) => {
    const body = parseWith(RunBodySchema, req.body, 'POST /v1/runs');
    const envelope = parseEnvelope(body.event, 'event', deps.config().runs.max_event_data_bytes);
    if (body.binding_id !== undefined && body.binding !== undefined)
      throw new LbotError('invalid_argument', 'POST /v1/runs takes binding_id or binding, not both');
    if (body.binding_id === undefined && body.binding === undefined && !body.runner_id)
      throw new LbotError('invalid_argument', 'POST /v1/runs needs runner_id, binding_id or binding');
    const named: NamedBinding | undefined =
      body.binding_id !== undefined
        ? { binding: configuredBinding(body.binding_id), source: 'configured' }
        : body.binding !== undefined
          ? { binding: inlineBinding(body.binding, warn), source: 'given' }
          : undefined;
    const binding = dispatch({ event: envelope, config: deps.config(), binding: named, runner: body.runner_id, runnerConfig: body.config });
    const run_id = await deps.runs.start({ event: envelope, binding });
    const wait = parseWith(WaitQuerySchema, req.query, 'query').wait;
    if (!wait) return reply.code(202).send({ run_id });
    const outcome = deps.runs.outcome(run_id);
    if (!outcome) {
      const done = await deps.stores.runs.get(run_id);
      return reply.code(200).send({ run_id, status: done?.status ?? 'running', error: done?.error ?? null, reply: null });
    }
    // ?wait=1: answer when the run has ended, with its outcome (for scripts that want one round trip).
    const o = await outcome;
    return reply.code(200).send({ run_id, status: o.status, error: o.error, reply: o.reply });
  });

  app.post('/v1/events', async (req, reply) => {
    const body = isRecord(req.body) && 'event' in req.body && !('event_id' in req.body) ? req.body.event : req.body;
    return routeEvent(parseEnvelope(body, 'event', deps.config().runs.max_event_data_bytes), undefined, reply);
  });

  app.post<{ Params: { platform: string } }>('/v1/webhooks/:platform', async (req, reply) => {
    const platform = parseWith(PlatformChoiceSchema, req.params.platform, 'platform');
    if (hasWebhookAuth(webhookAuth(), platform)) {
      const why = verifyWebhook(webhookAuth(), platform, {
        headers: req.headers,
        rawBody: rawBodies.get(req) ?? '',
        body: req.body,
        nowS: Math.floor(Date.now() / 1000),
      });
      if (why) {
        req.log.warn({ event: 'webhook.rejected', platform, reason: why }, `${platform} webhook refused: ${why}`);
        throw new LbotError('unauthorized', `${platform} webhook refused: ${why}`, { details: { platform } });
      }
    }
    // ?bot_id= names the bot for platforms whose payloads do not (Telegram, Discord dispatches).
    const { bot_id } = parseWith(BotQuerySchema, req.query, 'query');
    const result = normalizePlatformPayload(platform, req.body, { receivedAt: Math.floor(Date.now() / 1000), ...(bot_id ? { botId: bot_id } : {}) });
    if (result.kind === 'challenge') return reply.code(200).send(result.response);
    if (result.kind === 'ignored') return reply.code(200).send({ ok: true, ignored: result.reason });
    if (!redelivery.admit(result.envelope.event_id)) return reply.code(200).send({ ok: true, duplicate: true, event_id: result.envelope.event_id });
    const envelope = parseEnvelope(result.envelope, `${result.platform} payload`, deps.config().runs.max_event_data_bytes);
    if (result.platform === 'discord' && envelope.event_type === 'interaction.invoked' && isRecord(result.raw) && !('op' in result.raw)) {
      // Discord wants an interaction answered within 3 s: defer it (type 5); the run's replies then edit
      // the deferred response and follow up on the interaction webhook (docs/delivery.md).
      await startEventRun(deps, envelope, result.raw);
      return reply.code(200).send({ type: 5 });
    }
    return routeEvent(envelope, result.raw, reply);
  });

  app.get<{ Params: { id: string } }>('/v1/runs/:id', async (req) => {
    // A run waiting its turn (run_policy enqueue) has no record yet: the server answers what it knows.
    const run = (await deps.stores.runs.get(req.params.id)) ?? (await deps.runs.queued(req.params.id));
    if (!run) throw new LbotError('not_found', `run ${req.params.id} not found`);
    return run;
  });

  app.get('/v1/runs', async (req) => {
    const q = parseWith(PageQuerySchema, req.query, 'query');
    return { items: await deps.stores.runs.list(q.limit ? { limit: q.limit } : {}) };
  });

  app.post<{ Params: { id: string } }>('/v1/runs/:id/cancel', async (req, reply) => {
    if (await deps.runs.cancel(req.params.id)) return reply.code(202).send({ ok: true, run_id: req.params.id });
    const run = await deps.stores.runs.get(req.params.id);
    if (!run) throw new LbotError('not_found', `run ${req.params.id} not found`);
    throw new LbotError('run.not_in_flight', `run ${req.params.id} is not in flight (status ${run.status})`, { details: { status: run.status } });
  });

  app.get<{ Params: { id: string } }>('/v1/runs/:id/results', async (req, reply) => {
    const sse = (req.headers.accept ?? '').includes('text/event-stream');
    const stream = new PassThrough();
    // A line tells the client what the stores hold: what it shows is committed before it is sent.
    let sending = Promise.resolve();
    const write = (line: ResultLine | Record<string, unknown>) => {
      const text = sse ? `event: ${String(line.type)}\ndata: ${JSON.stringify(line)}\n\n` : `${JSON.stringify(line)}\n`;
      sending = sending.then(async () => {
        await deps.stores.commit();
        stream.write(text);
      });
    };
    const end = () =>
      void sending.then(
        () => stream.end(),
        (err: unknown) => stream.destroy(err instanceof Error ? err : new Error(String(err))),
      );
    reply.header('content-type', sse ? 'text/event-stream' : 'application/x-ndjson').header('cache-control', 'no-cache');
    const live = deps.runs.get(req.params.id);
    if (live) {
      for (const item of live.items) write(streamLine(item));
      const onItem = (item: StreamItem) => write(streamLine(item));
      const onEnd = () => {
        live.events.off('item', onItem);
        end();
      };
      live.events.on('item', onItem);
      live.events.once('end', onEnd);
      req.raw.once('close', () => live.events.off('item', onItem).off('end', onEnd));
      return reply.send(stream);
    }
    // Not running here: the record is followed until the run ends (another instance or a worker runs it).
    const id = req.params.id;
    const first = await deps.stores.runs.get(id);
    if (!first && !(await deps.runs.queued(id))) throw new LbotError('not_found', `run ${id} not found`);
    let gone = false;
    req.raw.once('close', () => (gone = true));
    void (async () => {
      let sent = 0;
      for (let run = first; !gone; run = await deps.stores.runs.get(id)) {
        for (const r of run?.results.slice(sent) ?? []) write(r);
        sent = run?.results.length ?? 0;
        if (run && run.status !== 'running') {
          write(summaryLine(run));
          break;
        }
        if (!run && !(await deps.runs.queued(id))) break; // ended without a record: cancelled before it started
        await deps.runs.changed(id, FOLLOW_POLL_MS);
      }
    })()
      .catch((err: unknown) => warn(`following run ${id} failed: ${err instanceof Error ? err.message : String(err)}`))
      .finally(end);
    return reply.send(stream);
  });

  app.get('/v1/events', async (req) => {
    const q = parseWith(PageQuerySchema, req.query, 'query');
    return await deps.stores.events.page({
      ...(q.conversation ? { conversation_id: q.conversation } : {}),
      event_types: q.type ? [q.type] : null,
      before_seq: q.before ?? null,
      limit: q.limit ?? 50,
    });
  });
  app.get<{ Params: { id: string } }>('/v1/events/:id', async (req) => {
    const [record] = await deps.stores.events.findByEventId(req.params.id);
    if (!record) throw new LbotError('not_found', `event ${req.params.id} not found`);
    return record;
  });
  app.get('/v1/transcript', async (req) => {
    const q = parseWith(PageQuerySchema.extend({ conversation: z.string().min(1) }), req.query, 'query');
    return await deps.stores.transcript.page({
      conversation_id: q.conversation,
      before_seq: q.before ?? null,
      after_seq: q.after ?? null,
      limit: q.limit ?? 50,
      direction: q.after !== undefined ? 'forward' : 'backward',
      include_artifacts: true,
    });
  });
  app.get('/v1/state', async (req) => {
    const q = parseWith(StateQuerySchema, req.query, 'query');
    return {
      items: await deps.stores.state.entries({
        ...(q.runner ? { runner_id: q.runner } : {}),
        ...(q.binding ? { binding_id: q.binding } : {}),
        ...(q.scope ? { scope: q.scope } : {}),
        ...(q.limit ? { limit: q.limit } : {}),
      }),
    };
  });
  app.get('/v1/artifacts', async (req) => {
    const q = parseWith(ArtifactListQuerySchema, req.query, 'query');
    return { items: (await deps.stores.artifacts.list({ ...(q.run ? { run_id: q.run } : {}), ...(q.limit ? { limit: q.limit } : {}) })).map(publicArtifact) };
  });
  app.get<{ Params: { id: string } }>('/v1/artifacts/:id', async (req) => {
    const r = await deps.stores.artifacts.get(req.params.id);
    if (!r) throw new LbotError('not_found', `artifact ${req.params.id} not found`);
    return publicArtifact(r);
  });
  app.get<{ Params: { id: string }; Querystring: unknown }>('/v1/artifacts/:id/content', async (req) => {
    const q = parseWith(ArtifactReadQuerySchema, req.query, 'query');
    const r = await deps.stores.artifacts.get(req.params.id);
    if (!r) throw new LbotError('not_found', `artifact ${req.params.id} not found`);
    return await deps.stores.artifacts.read(r, q.offset, q.length ?? null);
  });

  return app;
}
