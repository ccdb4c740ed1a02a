// The JSON-RPC peer both ends use: typed control requests, one settle path for answer, timeout,
// abort and end, inbound answers sent once, and the side-typed method table.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  RPC_ERROR_CODES,
  RpcErrorReply,
  RpcPeer,
  RpcReplyError,
  RpcResultError,
  RpcTimeoutError,
  controlMethods,
  type InboundRequest,
  type RpcSide,
} from '../../../src/core/protocol/index.js';

afterEach(() => {
  vi.useRealTimers();
});

function peer<S extends RpcSide>(side: S, onRequest: (req: InboundRequest) => unknown = () => null) {
  const sent: Record<string, unknown>[] = [];
  const notifications: Array<[string, unknown]> = [];
  const strays: unknown[] = [];
  const failed: unknown[] = [];
  const p = new RpcPeer(side, {
    send: (m) => sent.push(m),
    onRequest,
    onNotification: (method, params) => notifications.push([method, params]),
    onStrayResponse: (id) => strays.push(id),
    onAnswerFailed: (_method, err) => failed.push(err),
  });
  return { p, sent, notifications, strays, failed };
}

const initParams = { protocol_version: '1', host: { name: 'lbot', version: '0' } };

describe('RpcPeer', () => {
  it('returns the parsed result of a control request', async () => {
    const { p, sent } = peer('host');
    const answer = p.request('initialize', initParams);
    expect(sent).toEqual([{ jsonrpc: '2.0', id: 1, method: 'initialize', params: initParams }]);
    p.receive({ jsonrpc: '2.0', id: 1, result: { plugin: { author: 'a', name: 'b' } } });
    // The schema's default fills `runners`.
    await expect(answer).resolves.toEqual({ plugin: { author: 'a', name: 'b' }, runners: [] });
  });

  it('rejects a result that does not match the method table with RpcResultError', async () => {
    const { p } = peer('host');
    const answer = p.request('run', { run_id: 'r', runner_name: 'x', context: {} as never }).catch((err: unknown) => err);
    p.receive({ jsonrpc: '2.0', id: 1, result: { status: 'done' } });
    const err = await answer;
    expect(err).toBeInstanceOf(RpcResultError);
    expect(err instanceof RpcResultError && err.raw).toEqual({ status: 'done' });
    expect(err instanceof RpcResultError && err.issue).toMatch(/^status: /);
  });

  it('turns an error answer into RpcErrorReply and ignores a second answer to the same id', async () => {
    const { p, strays } = peer('host');
    const answer = p.request('shutdown', {}).catch((err: unknown) => err);
    p.receive({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'boom', data: { x: 1 } } });
    p.receive({ jsonrpc: '2.0', id: 1, result: {} });
    const err = await answer;
    expect(err instanceof RpcErrorReply && [err.rpcCode, err.message, err.data]).toEqual([-32603, 'boom', { x: 1 }]);
    expect(strays).toEqual([1]);
  });

  it('reports responses with unknown, string or null ids as strays and settles nothing', async () => {
    const { p, strays } = peer('host');
    const answer = p.request('shutdown', {}, { timeoutMs: 50 });
    p.receive({ jsonrpc: '2.0', id: 99, result: {} });
    p.receive({ jsonrpc: '2.0', id: '1', result: {} });
    p.receive({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'bad' } });
    expect(strays).toEqual([99, '1', null]);
    await expect(answer).rejects.toBeInstanceOf(RpcTimeoutError);
  });

  it('times out and aborts through the same path, with the owner-supplied errors', async () => {
    vi.useFakeTimers();
    const p = new RpcPeer('plugin', {
      send: () => undefined,
      onRequest: () => null,
      onNotification: () => undefined,
      errors: { timeout: (m, ms) => new Error(`t:${m}:${ms}`), aborted: (m) => new Error(`a:${m}`) },
    });
    const timed = p.requestRaw('state.get', {}, { timeoutMs: 100 }).catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(100);
    expect(String(await timed)).toBe('Error: t:state.get:100');
    const ac = new AbortController();
    const aborted = p.requestRaw('state.get', {}, { timeoutMs: 100, signal: ac.signal }).catch((err: unknown) => err);
    ac.abort();
    expect(String(await aborted)).toBe('Error: a:state.get');
    const pre = p.requestRaw('state.get', {}, { signal: AbortSignal.abort() }).catch((err: unknown) => err);
    expect(String(await pre)).toBe('Error: a:state.get');
    // Nothing is left to fire once a request has settled.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('end() fails what is in flight, refuses new requests, and drops answers to aborted inbound requests', async () => {
    let release: (v: unknown) => void = () => undefined;
    let seen: InboundRequest | undefined;
    const { p, sent } = peer('host', (req) => {
      seen = req;
      return new Promise((resolve) => (release = resolve));
    });
    const inFlight = p.request('shutdown', {}).catch((err: unknown) => err);
    p.receive({ jsonrpc: '2.0', id: 'x', method: 'state.get', params: {} });
    const ended = new Error('gone');
    p.end(ended);
    expect(await inFlight).toBe(ended);
    await expect(p.requestRaw('state.get', {})).rejects.toBe(ended);
    expect(seen?.signal.aborted).toBe(true);
    release({ value: 1 });
    await new Promise((r) => setImmediate(r));
    p.notify('run/cancel', { run_id: 'r' });
    expect(sent).toHaveLength(1);
  });

  it('aborts the signal a handler took before end(), and hands an aborted one to a handler that asks after it', () => {
    const seen: InboundRequest[] = [];
    const { p } = peer('host', (req) => {
      seen.push(req);
      return new Promise(() => undefined);
    });
    p.receive({ jsonrpc: '2.0', id: 1, method: 'state.get', params: {} });
    p.receive({ jsonrpc: '2.0', id: 2, method: 'state.get', params: {} });
    const early = seen[0]?.signal;
    const aborts: unknown[] = [];
    early?.addEventListener('abort', () => aborts.push('abort'));
    expect(early?.aborted).toBe(false);
    p.end(new Error('gone'));
    expect(aborts).toEqual(['abort']);
    expect(seen[1]?.signal.aborted).toBe(true);
  });

  it('answers inbound requests: value, promise, RpcReplyError, other throws; afterAnswer runs after the answer', async () => {
    const order: string[] = [];
    const sent: Record<string, unknown>[] = [];
    const p = new RpcPeer('plugin', {
      send: (m) => {
        sent.push(m);
        order.push(`sent ${String(m.id)}`);
      },
      onRequest: (req) => {
        req.afterAnswer(() => order.push(`after ${String(req.id)}`));
        if (req.method === 'sync') return undefined;
        if (req.method === 'async') return Promise.resolve({ ok: true });
        if (req.method === 'refused') throw new RpcReplyError(RPC_ERROR_CODES.methodNotFound, 'method not found: refused');
        return Promise.reject(new Error('kaput'));
      },
      onNotification: () => undefined,
    });
    p.receive({ jsonrpc: '2.0', id: 1, method: 'sync', params: {} });
    expect(order).toEqual(['sent 1', 'after 1']);
    p.receive({ jsonrpc: '2.0', id: 2, method: 'async', params: {} });
    p.receive({ jsonrpc: '2.0', id: 3, method: 'refused', params: {} });
    p.receive({ jsonrpc: '2.0', id: 4, method: 'other', params: {} });
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([
      { jsonrpc: '2.0', id: 1, result: null },
      { jsonrpc: '2.0', id: 3, error: { code: -32601, message: 'method not found: refused' } },
      { jsonrpc: '2.0', id: 2, result: { ok: true } },
      { jsonrpc: '2.0', id: 4, error: { code: -32000, message: 'kaput' } },
    ]);
  });

  it('reports an answer that could not be sent instead of throwing', () => {
    const failures: unknown[] = [];
    const p = new RpcPeer('plugin', {
      send: () => {
        throw new Error('pipe closed');
      },
      onRequest: () => ({}),
      onNotification: () => undefined,
      onAnswerFailed: (method, err) => failures.push([method, String(err)]),
    });
    p.receive({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    expect(failures).toEqual([['initialize', 'Error: pipe closed']]);
  });

  it('passes notifications through with their params', () => {
    const { p, notifications } = peer('plugin');
    p.receive({ jsonrpc: '2.0', method: 'run/cancel', params: { run_id: 'r1' } });
    expect(notifications).toEqual([['run/cancel', { run_id: 'r1' }]]);
  });

  it('declares which side sends each control method', () => {
    const table = Object.entries(controlMethods).map(([method, entry]) => [method, entry.kind, entry.from]);
    expect(table).toEqual([
      ['initialize', 'request', 'host'],
      ['run', 'request', 'host'],
      ['shutdown', 'request', 'host'],
      ['run/result', 'notification', 'plugin'],
      ['run/cancel', 'notification', 'host'],
      ['models.stream/chunk', 'notification', 'host'],
    ]);
    const plugin = peer('plugin').p;
    const host = peer('host').p;
    // @ts-expect-error the plugin side may not send initialize
    void plugin.request('initialize', initParams).catch(() => undefined);
    // @ts-expect-error the host side may not send run/result
    host.notify('run/result', { run_id: 'r', result: { type: 'run.completed', data: {} } });
  });
});
