// The client of a remote box (`lbot box serve`): the box service's operations over its HTTP API. Answers are
// parsed with the wire schemas; refusals come back as LbotErrors with the server's stable codes.
import http from 'node:http';
import https from 'node:https';
import type { z } from 'zod';
import {
  ErrorAnswerSchema,
  ExecAnswerSchema,
  FileOpResultSchema,
  OkAnswerSchema,
  ProcessAnswerSchema,
  REMOTE_BOX_PREFIX,
  SessionAnswerSchema,
  SessionsAnswerSchema,
  StatusAnswerSchema,
  type FileOpBody,
  type ProcessStartBody,
  type RemoteExecInput,
} from '../../../core/box/remote-wire.js';
import { isErrorCode } from '../../../core/error-table.js';
import { LbotError } from '../../../core/errors.js';
import { tryParseJson } from '../../../core/json.js';
import { openRemoteAttachment, type RemoteAttachment } from './attach-client.js';

export type RemoteBoxOptions = {
  /** The box server's base URL, `http(s)://host:port`. */
  url: string;
  /** The deployment's token (LBOT_BOX_TOKEN); without one every call is refused with `unauthorized`. */
  token: string | null;
  /** Extra CA certificates (PEM) to trust, for a server with a private certificate. */
  ca?: Buffer;
};

/** Network failures after which a retry may succeed (the server restarting, a dropped connection). */
const LOST = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);

function errnoOf(err: unknown): string {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : '';
}

export class RemoteBoxClient {
  readonly url: string;
  readonly #token: string | null;
  readonly #ca: Buffer | undefined;

  constructor(opts: RemoteBoxOptions) {
    this.url = opts.url.replace(/\/+$/, '');
    this.#token = opts.token;
    this.#ca = opts.ca;
  }

  status(signal?: AbortSignal) {
    return this.#call('GET', '/status', undefined, StatusAnswerSchema, signal);
  }

  /** Runs a command (get-or-create session) and answers the truncated result with its effective spec. */
  exec(input: RemoteExecInput, signal?: AbortSignal) {
    return this.#call('POST', '/exec', input, ExecAnswerSchema, signal);
  }

  /** A native tool's file operation, run in the session by the box server's in-sandbox helper. */
  fileOp(body: FileOpBody, signal?: AbortSignal) {
    return this.#call('POST', '/fileop', body, FileOpResultSchema, signal);
  }

  async sessions(signal?: AbortSignal) {
    return (await this.#call('GET', '/sessions', undefined, SessionsAnswerSchema, signal)).sessions;
  }

  session(id: string, signal?: AbortSignal) {
    return this.#call('GET', `/sessions/${encodeURIComponent(id)}`, undefined, SessionAnswerSchema, signal);
  }

  async removeSession(id: string, signal?: AbortSignal): Promise<void> {
    await this.#call('DELETE', `/sessions/${encodeURIComponent(id)}`, undefined, OkAnswerSchema, signal);
  }

  startProcess(sessionId: string, body: ProcessStartBody, signal?: AbortSignal) {
    return this.#call('POST', `/sessions/${encodeURIComponent(sessionId)}/processes`, body, ProcessAnswerSchema, signal);
  }

  processStatus(sessionId: string, processId: string, signal?: AbortSignal) {
    return this.#call('GET', `/sessions/${encodeURIComponent(sessionId)}/processes/${encodeURIComponent(processId)}`, undefined, ProcessAnswerSchema, signal);
  }

  async stopProcess(sessionId: string, processId: string, signal?: AbortSignal): Promise<void> {
    await this.#call('DELETE', `/sessions/${encodeURIComponent(sessionId)}/processes/${encodeURIComponent(processId)}`, undefined, OkAnswerSchema, signal);
  }

  /** Connects to a running managed process's stdin/stdout over a WebSocket (box.md "Remote box"). */
  attach(sessionId: string, processId: string): Promise<RemoteAttachment> {
    const route = `/sessions/${encodeURIComponent(sessionId)}/processes/${encodeURIComponent(processId)}/attach`;
    const what = `attach ${REMOTE_BOX_PREFIX}${route}`;
    const target = `${this.url.replace(/^http/, 'ws')}${REMOTE_BOX_PREFIX}${route}`;
    return openRemoteAttachment(target, this.#token ? { authorization: `Bearer ${this.#token}` } : {}, {
      ...(this.#ca ? { ca: this.#ca } : {}),
      refusal: (status, text) => this.#refusal(status, text, what),
      network: (err) => this.#network(err, what),
    });
  }

  /**
   * One request. node:http rather than fetch: fetch gives up on an answer after 300 s without bytes, and a
   * command may run longer (its own timeout, plus the wait for the one before it in the same session).
   */
  #call<S extends z.ZodType>(method: string, route: string, body: unknown, schema: S, signal?: AbortSignal): Promise<z.output<S>> {
    const what = `${method} ${REMOTE_BOX_PREFIX}${route}`;
    const target = new URL(`${this.url}${REMOTE_BOX_PREFIX}${route}`);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = {
      accept: 'application/json',
      ...(this.#token ? { authorization: `Bearer ${this.#token}` } : {}),
      ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
    };
    const send = target.protocol === 'https:' ? https.request : http.request;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(this.#aborted(signal, what));
      let settled = false;
      const fail = (err: LbotError) => {
        if (settled) return;
        settled = true;
        reject(err);
      };
      const req = send(target, { method, headers, ...(this.#ca ? { ca: this.#ca } : {}), ...(signal ? { signal } : {}) }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => fail(signal?.aborted ? this.#aborted(signal, what) : this.#network(err, what)));
        res.on('close', () => {
          if (!res.complete)
            fail(signal?.aborted ? this.#aborted(signal, what) : this.#network(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }), what));
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          try {
            resolve(this.#answer(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), schema, what));
          } catch (err) {
            reject(err);
          }
        });
      });
      req.on('error', (err) => fail(signal?.aborted ? this.#aborted(signal, what) : this.#network(err, what)));
      req.end(payload);
    });
  }

  #answer<S extends z.ZodType>(status: number, text: string, schema: S, what: string): z.output<S> {
    const json = tryParseJson(text);
    if (status >= 200 && status < 300) {
      const ok = schema.safeParse(json);
      if (ok.success) return ok.data;
      throw new LbotError('box.unavailable', `the box server at ${this.url} answered ${what} with a body lbot does not understand`, {
        details: { reason: 'bad_answer', url: this.url },
        hint: 'check that box.remote.url points at an lbot box serve of the same lbot version',
      });
    }
    throw this.#refusal(status, text, what);
  }

  /** A non-2xx answer as the LbotError the server sent (its stable code), or a clear note that it was not lbot. */
  #refusal(status: number, text: string, what: string): LbotError {
    const refusal = ErrorAnswerSchema.safeParse(tryParseJson(text));
    if (!refusal.success) {
      return new LbotError('box.unavailable', `the box server at ${this.url} answered ${what} with HTTP ${status} and no lbot error`, {
        retryable: status >= 500,
        details: { reason: 'bad_answer', url: this.url, status },
        hint: 'check that box.remote.url points at an lbot box serve (not a proxy error page or another service)',
      });
    }
    const e = refusal.data.error;
    const code = isErrorCode(e.code) ? e.code : 'internal';
    const hint =
      code === 'unauthorized' ? `set LBOT_BOX_TOKEN to the token of the box server at ${this.url} (its LBOT_BOX_TOKEN or <data-dir>/box.token)` : undefined;
    return new LbotError(code, e.message, { retryable: e.retryable, details: { ...e.details, remote: this.url }, ...(hint ? { hint } : {}) });
  }

  #network(err: unknown, what: string): LbotError {
    const errno = errnoOf(err) || (err instanceof Error && err.message === 'socket hang up' ? 'ECONNRESET' : '');
    const text = err instanceof Error ? err.message : String(err);
    if (LOST.has(errno)) {
      return new LbotError(
        'box.unavailable',
        `the box server at ${this.url} closed the connection during ${what} (${errno}); the command may not have finished`,
        {
          retryable: true,
          cause: err,
          details: { reason: 'connection_lost', url: this.url, errno },
          hint: 'the box server stopped or restarted: retry once it is back (lbot box serve on that machine)',
        },
      );
    }
    return new LbotError('box.unavailable', `cannot reach the box server at ${this.url} for ${what}: ${errno || text}`, {
      retryable: true,
      cause: err,
      details: { reason: 'connect_failed', url: this.url, errno },
      hint: `start lbot box serve on that machine (or fix box.remote.url${errno === 'ECONNREFUSED' ? ': nothing listens there' : ''})`,
    });
  }

  #aborted(signal: AbortSignal, what: string): LbotError {
    const reason: unknown = signal.reason;
    return reason instanceof LbotError ? reason : new LbotError('cancelled', `${what} on the box server at ${this.url} was cancelled`);
  }
}
