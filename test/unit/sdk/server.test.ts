// The plugin-side protocol server driven line by line in memory: initialize, run, results,
// cancel, host API calls and their errors, unknown methods, shutdown.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isRecord } from '../../../src/core/json.js';
import { ApiCallError, completed, createTestContext, definePlugin, defineRunner, delta, message } from '../../../src/sdk/index.js';
import { createPluginServer } from '../../../src/sdk/server.js';

afterEach(() => {
  vi.useRealTimers();
});

function harness(plugin = definePlugin({ runners: {} })) {
  const sent: Record<string, unknown>[] = [];
  const shutdown = vi.fn();
  const logs: string[] = [];
  const server = createPluginServer({
    plugin,
    info: { plugin: { author: 'acme', name: 't', version: '1' }, runners: [{ kind: 'AgentRunner', metadata: { name: 'default' } }] },
    send: (m) => sent.push(m),
    onShutdown: shutdown,
    log: (l) => logs.push(l),
  });
  const send = (m: unknown): void => server.handleLine(JSON.stringify(m));
  const settle = () => new Promise((r) => setImmediate(r));
  const replyTo = (id: number) => sent.find((m) => m.id === id && !('method' in m));
  return { sent, shutdown, logs, server, send, settle, replyTo };
}

function runRequest(id: number, script?: unknown) {
  const context = createTestContext({ config: { script } });
  return { msg: { jsonrpc: '2.0', id, method: 'run', params: { run_id: context.run_id, runner_name: 'default', context } }, run_id: context.run_id };
}

describe('plugin server', () => {
  it('answers initialize with the plugin info', () => {
    const h = harness();
    h.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocol_version: '1', host: { name: 'lbot', version: '0' } } });
    expect(h.sent).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        result: { plugin: { author: 'acme', name: 't', version: '1' }, runners: [{ kind: 'AgentRunner', metadata: { name: 'default' } }] },
      },
    ]);
  });

  it('sends results as run/result notifications, then the run reply', async () => {
    const plugin = definePlugin({
      runners: {
        default: defineRunner({
          async *run() {
            yield delta('he');
            yield message('hello');
            yield completed();
          },
        }),
      },
    });
    const h = harness(plugin);
    const { msg, run_id } = runRequest(7);
    h.send(msg);
    await vi.waitFor(() => expect(h.replyTo(7)).toBeDefined());
    const notifications = h.sent.filter((m) => m.method === 'run/result');
    expect(notifications).toHaveLength(3);
    expect(notifications.map((n) => (isRecord(n.params) && isRecord(n.params.result) ? n.params.result.type : null))).toEqual([
      'message.delta',
      'message.completed',
      'run.completed',
    ]);
    expect(notifications.every((n) => isRecord(n.params) && n.params.run_id === run_id)).toBe(true);
    expect(h.sent.indexOf(h.replyTo(7) ?? {})).toBe(3);
    expect(h.replyTo(7)).toEqual({ jsonrpc: '2.0', id: 7, result: { status: 'completed' } });
  });

  it('reports status failed when the runner emitted run.failed', async () => {
    const plugin = definePlugin({
      runners: {
        default: defineRunner({
          async *run() {
            yield { type: 'run.failed', data: { error: 'x' } };
          },
        }),
      },
    });
    const h = harness(plugin);
    h.send(runRequest(2).msg);
    await vi.waitFor(() => expect(h.replyTo(2)).toEqual({ jsonrpc: '2.0', id: 2, result: { status: 'failed' } }));
  });

  it('cancels one run by run_id and leaves the other running', async () => {
    const waiting = defineRunner({
      async *run(ctx) {
        yield delta('started');
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      },
    });
    const h = harness(definePlugin({ runners: { default: waiting } }));
    const a = runRequest(1);
    const b = runRequest(2);
    h.send(a.msg);
    h.send(b.msg);
    await h.settle();
    h.send({ jsonrpc: '2.0', method: 'run/cancel', params: { run_id: a.run_id } });
    await vi.waitFor(() => expect(h.replyTo(1)).toEqual({ jsonrpc: '2.0', id: 1, result: { status: 'cancelled' } }));
    expect(h.replyTo(2)).toBeUndefined();
    h.server.stopAll();
    await vi.waitFor(() => expect(h.replyTo(2)).toBeDefined());
  });

  it('carries host API calls: run_id added, result returned, -32000 data surfaced as ApiCallError', async () => {
    const outcomes: unknown[] = [];
    const runner = defineRunner({
      async *run(_ctx, api) {
        outcomes.push(await api.state.get('conversation', 'k'));
        try {
          await api.history.page({ limit: 5 });
        } catch (err) {
          outcomes.push(err);
        }
        try {
          await api.request('weird.method', {});
        } catch (err) {
          outcomes.push(err);
        }
        yield completed();
      },
    });
    const h = harness(definePlugin({ runners: { default: runner } }));
    const { msg, run_id } = runRequest(1);
    h.send(msg);
    await vi.waitFor(() => expect(h.sent.some((m) => m.method === 'state.get')).toBe(true));
    const get = h.sent.find((m) => m.method === 'state.get');
    expect(get?.params).toEqual({ scope: 'conversation', key: 'k', run_id });
    h.send({ jsonrpc: '2.0', id: get?.id, result: { value: 42 } });
    await vi.waitFor(() => expect(h.sent.some((m) => m.method === 'history.page')).toBe(true));
    const page = h.sent.find((m) => m.method === 'history.page');
    h.send({
      jsonrpc: '2.0',
      id: page?.id,
      error: { code: -32000, message: 'no', data: { code: 'unauthorized', message: 'no', retryable: false, details: { reason: 'permission_denied' } } },
    });
    await vi.waitFor(() => expect(h.sent.some((m) => m.method === 'weird.method')).toBe(true));
    const weird = h.sent.find((m) => m.method === 'weird.method');
    expect(weird?.params).toEqual({});
    h.send({ jsonrpc: '2.0', id: weird?.id, error: { code: -32601, message: 'method not found: weird.method' } });
    await vi.waitFor(() => expect(h.replyTo(1)).toBeDefined());
    expect(outcomes[0]).toBe(42);
    expect(outcomes[1]).toBeInstanceOf(ApiCallError);
    expect(outcomes[1] instanceof ApiCallError && outcomes[1].error).toEqual({
      code: 'unauthorized',
      message: 'no',
      retryable: false,
      details: { reason: 'permission_denied' },
    });
    expect(outcomes[2] instanceof ApiCallError && outcomes[2].code).toBe('not_found');
  });

  it('times an API call out at the method default as deadline_exceeded', async () => {
    vi.useFakeTimers();
    let caught: unknown;
    const runner = defineRunner({
      async *run(_ctx, api) {
        try {
          await api.events.get('ev-1');
        } catch (err) {
          caught = err;
        }
      },
    });
    const h = harness(definePlugin({ runners: { default: runner } }));
    h.send(runRequest(1).msg);
    await vi.advanceTimersByTimeAsync(15_000);
    await vi.waitFor(() => expect(h.replyTo(1)).toBeDefined());
    expect(caught instanceof ApiCallError && caught.error.code).toBe('deadline_exceeded');
    expect(caught instanceof ApiCallError && caught.details.reason).toBe('sdk_timeout');
  });

  it('answers unknown methods with -32601, bad run params with -32602, bad lines with -32600', () => {
    const h = harness();
    h.send({ jsonrpc: '2.0', id: 1, method: 'frobnicate', params: {} });
    h.send({ jsonrpc: '2.0', id: 2, method: 'run', params: { run_id: 'r' } });
    h.server.handleLine('not json');
    expect(h.sent[0]).toMatchObject({ id: 1, error: { code: -32601 } });
    expect(h.sent[1]).toMatchObject({ id: 2, error: { code: -32602 } });
    expect(h.sent[2]).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it('answers shutdown and asks the bootstrap to exit', () => {
    const h = harness();
    h.send({ jsonrpc: '2.0', id: 9, method: 'shutdown', params: {} });
    expect(h.sent).toEqual([{ jsonrpc: '2.0', id: 9, result: {} }]);
    expect(h.shutdown).toHaveBeenCalledOnce();
  });
});
