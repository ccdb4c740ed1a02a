// The HTTP API of `lbot box serve`: the box service's operations behind one bearer token per deployment.
// Every request/response operation is plain HTTP; attach (a byte stream both ways) is a WebSocket (attach-ws.ts).
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { LbotError } from '../../../core/errors.js';
import { FileOpBodySchema, ProcessStartBodySchema, REMOTE_BOX_BODY_LIMIT, REMOTE_BOX_PREFIX, RemoteExecInputSchema } from '../../../core/box/remote-wire.js';
import { parseOrThrow } from '../../../core/zod-issue.js';
import { sendHttpError } from '../../server/http-errors.js';
import { bearerMatches } from '../../server/token.js';
import { BoxToolPortImpl } from '../../tools/box-tools.js';
import type { BoxService } from '../service.js';
import { registerAttachWs } from './attach-ws.js';

export type BoxServerOptions = {
  box: BoxService;
  token: string;
  bodyLimitBytes?: number;
  /** The operator log: one `request` record per answer, one `auth.refused` per refused token. */
  logger?: FastifyBaseLogger;
  /** PEM certificate and key: the API is served over HTTPS. */
  tls?: { cert: Buffer; key: Buffer } | null;
};

const P = REMOTE_BOX_PREFIX;
const pathOf = (req: FastifyRequest): string => req.url.split('?')[0] ?? '';

/** Aborted when the caller goes away before its answer is sent (the command in the box is stopped then). */
function callerGone(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort(new LbotError('cancelled', 'the remote caller closed the connection'));
  });
  return ac.signal;
}

function body<S extends Parameters<typeof parseOrThrow>[0]>(schema: S, req: FastifyRequest) {
  return parseOrThrow(schema, req.body, `${req.method} ${pathOf(req)}`, '(body)', 'box.validation');
}

/** Builds (does not start) the box API server. */
export function buildBoxServer(opts: BoxServerOptions): FastifyInstance {
  const common = {
    bodyLimit: opts.bodyLimitBytes ?? REMOTE_BOX_BODY_LIMIT,
    forceCloseConnections: true,
    return503OnClosing: true,
    ...(opts.tls ? { https: { cert: opts.tls.cert, key: opts.tls.key } } : {}),
  } as const;
  const app: FastifyInstance = opts.logger
    ? Fastify({ ...common, loggerInstance: opts.logger, logController: new LogController({ disableRequestLogging: true }) })
    : Fastify({ ...common, logger: false });
  const box = opts.box;
  // File operations run the same in-sandbox helper as a local run's native tools.
  const port = new BoxToolPortImpl(box);

  app.setErrorHandler((err: unknown, _req, reply) => sendHttpError(reply, err));
  app.setNotFoundHandler((req) => {
    throw new LbotError('not_found', `no route ${req.method} ${pathOf(req)}`);
  });
  if (opts.logger) {
    app.addHook('onResponse', async (req, reply) => {
      req.log.info(
        { event: 'request', method: req.method, path: pathOf(req), status: reply.statusCode, duration_ms: Math.round(reply.elapsedTime) },
        'request',
      );
    });
  }
  app.addHook('onRequest', async (req) => {
    if (!req.routeOptions.url?.startsWith(`${P}/`)) return;
    if (bearerMatches(req.headers.authorization, opts.token)) return;
    const reason = req.headers.authorization ? 'wrong_token' : 'missing_token';
    req.log.warn({ event: 'auth.refused', method: req.method, path: pathOf(req), remote: req.ip, reason }, 'refused: missing or wrong bearer token');
    throw new LbotError('unauthorized', `missing or wrong bearer token for ${req.method} ${pathOf(req)}`, {
      details: { reason },
      hint: 'send Authorization: Bearer <token>, the LBOT_BOX_TOKEN (or <data-dir>/box.token) of the box server',
    });
  });

  app.get('/healthz', async () => ({ ok: true }));
  app.get(`${P}/status`, async () => box.status());
  app.post(`${P}/exec`, async (req, reply) => {
    const input = body(RemoteExecInputSchema, req);
    const { result, effective_spec } = await box.exec(input, { signal: callerGone(reply) });
    return { ...result, effective_spec };
  });
  app.post(`${P}/fileop`, async (req, reply) => {
    const b = body(FileOpBodySchema, req);
    return port.fileOpAnswer(b.session, b.op, { run_id: b.query_id, signal: callerGone(reply) });
  });
  app.get(`${P}/sessions`, async () => ({ sessions: await box.sessions() }));
  app.get<{ Params: { id: string } }>(`${P}/sessions/:id`, async (req) => box.session(req.params.id));
  app.delete<{ Params: { id: string } }>(`${P}/sessions/:id`, async (req) => {
    await box.removeSession(req.params.id);
    return { ok: true, removed: req.params.id };
  });
  app.get(`${P}/errors`, async () => ({ errors: box.errors() }));
  app.post<{ Params: { id: string } }>(`${P}/sessions/:id/processes`, async (req) => {
    const b = body(ProcessStartBodySchema, req);
    return box.startProcess(
      req.params.id,
      { process_id: b.process_id, command: b.command, args: b.args ?? [], env: b.env ?? {}, ...(b.cwd ? { cwd: b.cwd } : {}) },
      b.replace ? { replace: true } : {},
    );
  });
  app.get<{ Params: { id: string; pid: string } }>(`${P}/sessions/:id/processes/:pid`, async (req) => box.processStatus(req.params.id, req.params.pid));
  app.delete<{ Params: { id: string; pid: string } }>(`${P}/sessions/:id/processes/:pid`, async (req) => {
    await box.stopProcess(req.params.id, req.params.pid);
    return { ok: true, stopped: req.params.pid, session_id: req.params.id };
  });
  registerAttachWs(app, { box, token: opts.token, maxPayload: common.bodyLimit, ...(opts.logger ? { logger: opts.logger } : {}) });
  return app;
}
