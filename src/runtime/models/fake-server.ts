// A fake model upstream for tests and CI: OpenAI-compatible `/v1/chat/completions`, `/v1/embeddings`,
// `/v1/rerank`, `/v1/models`, and Anthropic's `/v1/messages`, answering a script (fake-server-script.ts)
// with strict request validation, streamed tool-call arguments split across chunks, a usage chunk, and
// fault knobs (status with Retry-After, malformed chunk, dropped connection, first-token and chunk delays).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { conceptEmbedding, hashEmbedding } from './fake.js';
import type { FakeScript, FakeStep } from './fake-server-script.js';
import {
  OaEmbeddingsSchema,
  RerankRequestSchema,
  validateAnthropic,
  validateOpenAiChat,
  validateWith,
  type AnMessages,
  type OaChat,
  type Refusal,
} from './fake-server-validate.js';

/** One request as the fake received it (headers without credentials). */
export type FakeRequest = {
  method: string;
  path: string;
  body: unknown;
  stream: boolean;
  /** `performance.now()` when the body had been read (for benchmarks: the gaps between a client's requests). */
  received_at: number;
};

export type FakeServer = {
  url: string;
  /** Base URL for provider `openai` (`…/v1`). */
  openaiBaseUrl: string;
  /** Base URL for provider `anthropic` (the SDK adds `/v1/messages`). */
  anthropicBaseUrl: string;
  port: number;
  readonly requests: readonly FakeRequest[];
  /** Streamed responses (and huge bodies) whose client went away before they ended (a cancelled call, a size cap). */
  readonly abortedStreams: number;
  /** Streams waiting before their last event (`hold_last_event`) and embedding calls held (`hold_embeddings_after`). */
  readonly heldStreams: number;
  /** Lets every held stream send its last event and every held embedding call be answered. */
  release(): void;
  close(): Promise<void>;
};

import { anthropicError, openAiError, pieces, readBody, replyOf, ScriptCursor, sendJson, words, type HugeBody } from './fake-server-http.js';

// Longer than 100 lines on purpose: one closure over the script cursor, the request log and the
// counters, whose inner functions are one per route and fault; its plumbing is in fake-server-http.ts.
export async function startFakeModelServer(script: FakeScript, opts: { host?: string; port?: number } = {}): Promise<FakeServer> {
  const cursor = new ScriptCursor(script.steps);
  const requests: FakeRequest[] = [];
  let aborted = 0;
  const held = new Set<() => void>();
  let seq = 0;
  let embeddingCalls = 0;

  const authorized = (req: IncomingMessage, kind: 'openai' | 'anthropic'): boolean => {
    if (!script.api_key) return true;
    const bearer = req.headers.authorization === `Bearer ${script.api_key}`;
    // The Messages API takes `x-api-key`; newer SDKs send the key as a bearer token, which it accepts too.
    return kind === 'openai' ? bearer : bearer || req.headers['x-api-key'] === script.api_key;
  };
  const knownModel = (model: string) => !script.models || script.models.includes(model);

  /** Waits until `release()` or until the client goes away; true when it went away. */
  const holdUntilReleased = (res: ServerResponse) =>
    new Promise<boolean>((resolve) => {
      const go = () => {
        held.delete(go);
        res.off('close', gone);
        resolve(false);
      };
      const gone = () => {
        held.delete(go);
        resolve(true);
      };
      held.add(go);
      res.once('close', gone);
    });

  /** Writes SSE events with the step's delays; false when the client went away or a fault ended the stream. */
  async function streamEvents(res: ServerResponse, step: FakeStep | null, events: string[], kind: 'openai' | 'anthropic'): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    let closed = false;
    res.on('close', () => {
      if (!res.writableFinished) {
        closed = true;
        aborted += 1;
      }
    });
    const first = step?.first_token_delay_ms ?? script.first_token_delay_ms;
    const gap = step?.chunk_delay_ms ?? script.chunk_delay_ms;
    if (first > 0) await sleep(first);
    for (const [i, ev] of events.entries()) {
      if (closed) return;
      if (i > 0 && gap > 0) await sleep(gap);
      if (closed) return;
      if (i === 1 && step?.fault === 'malformed_chunk') {
        res.end(`${kind === 'anthropic' ? 'event: content_block_delta\n' : ''}data: {"choices": [{"delta": {"content": "bro\n\n`);
        return;
      }
      if (i === 1 && step?.fault === 'drop') {
        res.socket?.destroy();
        return;
      }
      if (i === events.length - 1 && step?.hold_last_event) {
        if ((await holdUntilReleased(res)) || closed) return;
      }
      res.write(ev);
    }
    res.end();
  }

  /** Writes `bytes` bytes of one reply (or stream event) with backpressure, until done or the client goes away. */
  async function hugeBody(res: ServerResponse, fault: HugeBody, stream: boolean, kind: 'openai' | 'anthropic'): Promise<void> {
    const head = stream
      ? kind === 'openai'
        ? 'data: {"choices":[{"index":0,"delta":{"content":"'
        : 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"'
      : kind === 'openai'
        ? '{"id":"chatcmpl-huge","object":"chat.completion","created":0,"model":"huge","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"'
        : '{"id":"msg_huge","type":"message","role":"assistant","model":"huge","stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1},"content":[{"type":"text","text":"';
    const tail = stream ? '"}}]}\n\n' : kind === 'openai' ? '"}}]}' : '"}]}';
    const filler = Math.max(0, fault.bytes - head.length - tail.length);
    const socket = res.socket;
    if (!socket) return;
    let closed = false;
    socket.once('close', () => (closed = true));
    // An understated Content-Length is a lie Node's response object would not tell: write the raw response.
    const raw = !stream && fault.content_length === 'understated';
    const out = raw ? socket : res;
    if (raw) socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1024\r\n\r\n');
    else {
      const length = !stream && fault.content_length === 'exact' ? { 'content-length': String(head.length + filler + tail.length) } : {};
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json', ...length });
    }
    const write = async (text: string) => {
      if (out.write(text) || closed) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          out.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        out.on('drain', done);
        socket.on('close', done);
      });
    };
    await write(head);
    const piece = 'a'.repeat(64 * 1024);
    for (let left = filler; left > 0 && !closed; left -= piece.length) await write(left >= piece.length ? piece : piece.slice(0, left));
    if (closed) {
      aborted += 1;
      return;
    }
    await write(tail);
    if (raw) socket.end();
    else res.end();
  }

  /** A fault step answered before any reply: an error status, a huge body, or a dropped / malformed non-stream answer. */
  async function earlyFault(res: ServerResponse, step: FakeStep | null, stream: boolean, kind: 'openai' | 'anthropic'): Promise<boolean> {
    const fault = step?.fault;
    if (!fault) return false;
    if (typeof fault === 'object' && 'huge_body' in fault) {
      await hugeBody(res, fault.huge_body, stream, kind);
      return true;
    }
    if (typeof fault === 'object') {
      const refusal: Refusal = {
        status: fault.status,
        message: fault.message ?? (fault.status === 429 ? 'Rate limit reached' : 'The server had an error while processing your request.'),
      };
      const headers: Record<string, string> = fault.retry_after_s !== undefined ? { 'retry-after': String(fault.retry_after_s) } : {};
      sendJson(res, fault.status, kind === 'openai' ? openAiError(refusal) : anthropicError(refusal), headers);
      return true;
    }
    if (stream) return false;
    if (fault === 'drop') res.socket?.destroy();
    else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id": "chatcmpl-broken", "choices": [');
    }
    return true;
  }

  async function openAiChat(res: ServerResponse, req: OaChat): Promise<void> {
    const step = cursor.next();
    const stream = req.stream === true;
    if (await earlyFault(res, step, stream, 'openai')) return;
    const lastUser = [...req.messages].reverse().find((m) => m.role === 'user');
    const userText =
      typeof lastUser?.content === 'string' ? lastUser.content : (lastUser?.content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
    const id = `chatcmpl-${++seq}`;
    const reply = replyOf(step, userText, `call_${seq}`);
    const finish = reply.finish ?? (reply.toolCalls.length ? 'tool_calls' : 'stop');
    const prompt = req.messages.reduce((n, m) => n + (typeof m.content === 'string' ? words(m.content) : 1), 0);
    const usage = { prompt_tokens: prompt, completion_tokens: words(reply.content) + reply.toolCalls.length, total_tokens: 0 };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    const created = Math.floor(Date.now() / 1000);
    if (!stream) {
      const message = {
        role: 'assistant',
        content: reply.content || (reply.toolCalls.length ? null : ''),
        refusal: null,
        ...(reply.toolCalls.length
          ? { tool_calls: reply.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) }
          : {}),
      };
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model: req.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
        usage,
      });
      return;
    }
    const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: req.model, choices: [{ index: 0, delta, logprobs: null, finish_reason }] })}\n\n`;
    const events = [chunk({ role: 'assistant', content: '' })];
    for (const p of pieces(reply.content, script.chunk_size)) events.push(chunk({ content: p }));
    for (const [index, c] of reply.toolCalls.entries()) {
      events.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }));
      for (const p of pieces(c.arguments, script.chunk_size)) events.push(chunk({ tool_calls: [{ index, function: { arguments: p } }] }));
    }
    events.push(chunk({}, finish));
    if (req.stream_options?.include_usage)
      events.push(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: req.model, choices: [], usage })}\n\n`);
    events.push('data: [DONE]\n\n');
    await streamEvents(res, step, events, 'openai');
  }

  async function anthropicMessages(res: ServerResponse, req: AnMessages): Promise<void> {
    const step = cursor.next();
    const stream = req.stream === true;
    if (await earlyFault(res, step, stream, 'anthropic')) return;
    const lastUser = [...req.messages].reverse().find((m) => m.role === 'user');
    const userText =
      typeof lastUser?.content === 'string' ? lastUser.content : (lastUser?.content ?? []).map((b) => (b.type === 'text' ? b.text : '')).join('');
    const id = `msg_${++seq}`;
    const reply = replyOf(step, userText, `toolu_${seq}`);
    const stop = reply.finish ?? (reply.toolCalls.length ? 'tool_use' : 'end_turn');
    const input_tokens = req.messages.reduce(
      (n, m) => n + (typeof m.content === 'string' ? words(m.content) : m.content.reduce((k, b) => k + (b.type === 'text' ? words(b.text) : 1), 0)),
      0,
    );
    const output_tokens = words(reply.content) + reply.toolCalls.length;
    const content = [
      ...(reply.content ? [{ type: 'text', text: reply.content }] : []),
      ...reply.toolCalls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: JSON.parse(c.arguments) as unknown })),
    ];
    if (!stream) {
      sendJson(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model: req.model,
        content,
        stop_reason: stop,
        stop_sequence: null,
        usage: { input_tokens, output_tokens },
      });
      return;
    }
    const ev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const events = [
      ev('message_start', {
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: req.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens, output_tokens: 0 },
        },
      }),
    ];
    let index = 0;
    if (reply.content) {
      events.push(ev('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      for (const p of pieces(reply.content, script.chunk_size)) events.push(ev('content_block_delta', { index, delta: { type: 'text_delta', text: p } }));
      events.push(ev('content_block_stop', { index }));
      index += 1;
    }
    for (const c of reply.toolCalls) {
      events.push(ev('content_block_start', { index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } }));
      for (const p of pieces(c.arguments, script.chunk_size))
        events.push(ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: p } }));
      events.push(ev('content_block_stop', { index }));
      index += 1;
    }
    events.push(ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens } }));
    events.push(ev('message_stop', {}));
    await streamEvents(res, step, events, 'anthropic');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const kind = path === '/v1/messages' ? 'anthropic' : 'openai';
    const refuse = (r: Refusal) => sendJson(res, r.status, kind === 'openai' ? openAiError(r) : anthropicError(r));
    if (req.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, { object: 'list', data: (script.models ?? []).map((id) => ({ id, object: 'model', created: 0, owned_by: 'lbot-fake' })) });
      return;
    }
    if (req.method !== 'POST') return refuse({ status: 404, message: `Invalid URL (${req.method ?? '?'} ${path})` });
    if (!authorized(req, kind)) {
      return refuse(
        kind === 'openai' ? { status: 401, message: 'Incorrect API key provided.', code: 'invalid_api_key' } : { status: 401, message: 'invalid x-api-key' },
      );
    }
    if (kind === 'anthropic' && typeof req.headers['anthropic-version'] !== 'string')
      return refuse({ status: 400, message: 'anthropic-version: header is required' });
    const read = await readBody(req, script.max_body_bytes);
    if (!read.ok) return refuse(read.refusal);
    const body = read.body;
    const model = typeof body === 'object' && body !== null && 'model' in body && typeof body.model === 'string' ? body.model : '';
    const stream = typeof body === 'object' && body !== null && 'stream' in body && body.stream === true;
    requests.push({ method: 'POST', path, body, stream, received_at: performance.now() });
    if (model && !knownModel(model)) {
      return refuse({ status: 404, message: `The model \`${model}\` does not exist or you do not have access to it.`, code: 'model_not_found' });
    }
    if (path === '/v1/chat/completions') {
      const v = validateOpenAiChat(body);
      return v.ok ? await openAiChat(res, v.req) : refuse(v.refusal);
    }
    if (path === '/v1/messages') {
      const v = validateAnthropic(body);
      return v.ok ? await anthropicMessages(res, v.req) : refuse(v.refusal);
    }
    if (path === '/v1/embeddings') {
      const v = validateWith(OaEmbeddingsSchema, body);
      if (!v.ok) return refuse(v.refusal);
      if (script.hold_embeddings_after !== undefined && ++embeddingCalls > script.hold_embeddings_after) {
        if (await holdUntilReleased(res)) return;
      }
      const input = typeof v.req.input === 'string' ? [v.req.input] : v.req.input;
      const dims = v.req.dimensions ?? script.embedding_dims;
      const data = input.map((text, index) => {
        const vec = script.embedding_concepts ? conceptEmbedding(text, dims, script.embedding_concepts) : hashEmbedding(text, dims);
        const embedding = v.req.encoding_format === 'base64' ? Buffer.from(new Float32Array(vec).buffer).toString('base64') : vec;
        return { object: 'embedding', index, embedding };
      });
      const tokens = input.reduce((n, t) => n + words(t), 0);
      return sendJson(res, 200, { object: 'list', data, model: v.req.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
    }
    if (path === '/v1/rerank') {
      const v = validateWith(RerankRequestSchema, body);
      if (!v.ok) return refuse(v.refusal);
      const terms = v.req.query.toLowerCase().split(/\s+/).filter(Boolean);
      const scored = v.req.documents
        .map((doc, index) => ({ index, relevance_score: terms.filter((t) => doc.toLowerCase().includes(t)).length / terms.length }))
        .sort((a, b) => b.relevance_score - a.relevance_score);
      return sendJson(res, 200, {
        id: `rerank-${++seq}`,
        model: v.req.model,
        results: v.req.top_n ? scored.slice(0, v.req.top_n) : scored,
        usage: { total_tokens: words(v.req.query) },
      });
    }
    return refuse({ status: 404, message: `Invalid URL (POST ${path})` });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, openAiError({ status: 500, message: err instanceof Error ? err.message : String(err) }));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const bound: AddressInfo | string | null = server.address();
  if (typeof bound !== 'object' || bound === null) throw new Error('the fake model server did not bind a TCP port');
  const { port, address } = bound;
  const host = address.includes(':') ? `[${address}]` : address;
  const url = `http://${host}:${port}`;
  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    anthropicBaseUrl: url,
    port,
    requests,
    get heldStreams() {
      return held.size;
    },
    release: () => {
      for (const go of [...held]) go();
    },
    get abortedStreams() {
      return aborted;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
