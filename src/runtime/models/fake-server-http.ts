// The plumbing of the fake model upstream (fake-server.ts): the script cursor, the reply a step makes,
// bounded request bodies, JSON answers and each API's error body.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FakeStep } from './fake-server-script.js';
import type { Refusal } from './fake-server-validate.js';

export type HugeBody = Extract<NonNullable<FakeStep['fault']>, { huge_body: unknown }>['huge_body'];

export type Reply = { content: string; toolCalls: Array<{ id: string; name: string; arguments: string }>; finish: string | null };

export const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export class ScriptCursor {
  private index = 0;
  private used = 0;
  constructor(private readonly steps: readonly FakeStep[]) {}
  next(): FakeStep | null {
    const step = this.steps[this.index];
    if (!step) return null;
    this.used += 1;
    if (this.used >= step.times) {
      this.index += 1;
      this.used = 0;
    }
    return step;
  }
}

export function replyOf(step: FakeStep | null, lastUser: string, callPrefix: string): Reply {
  if (!step || (step.content === undefined && !step.tool_calls)) return { content: `echo: ${lastUser}`, toolCalls: [], finish: step?.finish_reason ?? null };
  const toolCalls = (step.tool_calls ?? []).map((c, i) => ({
    id: c.id ?? `${callPrefix}_${i}`,
    name: c.name,
    arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
  }));
  return { content: step.content ?? '', toolCalls, finish: step.finish_reason ?? null };
}

export async function readBody(req: IncomingMessage, max: number): Promise<{ ok: true; body: unknown } | { ok: false; refusal: Refusal }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > max) return { ok: false, refusal: { status: 413, message: `request body over ${max} bytes` } };
    chunks.push(buf);
  }
  try {
    return { ok: true, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch {
    return { ok: false, refusal: { status: 400, message: 'We could not parse the JSON body of your request.' } };
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export const openAiError = (r: Refusal) => ({
  error: {
    message: r.message,
    type: r.status === 401 ? 'invalid_request_error' : r.status >= 500 ? 'server_error' : 'invalid_request_error',
    param: r.param ?? null,
    code: r.code ?? null,
  },
});
export const anthropicError = (r: Refusal) => ({
  type: 'error',
  error: {
    type:
      r.status === 401
        ? 'authentication_error'
        : r.status === 404
          ? 'not_found_error'
          : r.status === 429
            ? 'rate_limit_error'
            : r.status >= 500
              ? 'api_error'
              : 'invalid_request_error',
    message: r.message,
  },
});
