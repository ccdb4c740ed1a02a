// The runner SDK in process: runInProcess, the typed API client, result helpers and stamping.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ApiCallError,
  actionRequested,
  artifactCreated,
  completed,
  createTestContext,
  definePlugin,
  defineRunner,
  delta,
  failed,
  isPlugin,
  message,
  runInProcess,
  stateUpdated,
  toolCompleted,
  toolStarted,
  type RunnerResult,
} from '../../../src/sdk/index.js';
import { callTimeoutMs } from '../../../src/sdk/client.js';
import { SDK_DEADLINE_GRACE_MS } from '../../../src/sdk/execute.js';

afterEach(() => {
  vi.useRealTimers();
});

const types = (results: RunnerResult[]): string[] => results.map((r) => r.type);

describe('definePlugin / defineRunner', () => {
  it('brands the plugin so it is recognised across SDK copies', () => {
    const plugin = definePlugin({ runners: { default: defineRunner({ async *run() {} }) } });
    expect(isPlugin(plugin)).toBe(true);
    expect(isPlugin({ runners: {} })).toBe(false);
    expect(isPlugin(null)).toBe(false);
    expect(Object.isFrozen(plugin)).toBe(true);
  });

  it('refuses a runner without run()', () => {
    expect(() => definePlugin({ runners: { x: { run: 1 } as never } })).toThrow(/no run\(\) function/);
  });
});

describe('result helpers', () => {
  it('build the wire shapes of runner-protocol.md §5.1', () => {
    expect(message('hi')).toEqual({ type: 'message.completed', data: { message: { role: 'assistant', content: 'hi' } } });
    expect(delta('hel')).toEqual({ type: 'message.delta', data: { chunk: { role: 'assistant', content: 'hel' } } });
    expect(completed()).toEqual({ type: 'run.completed', data: { finish_reason: 'stop' } });
    expect(completed({ message: 'bye' }).data).toEqual({ finish_reason: 'stop', message: { role: 'assistant', content: 'bye' } });
    expect(failed('boom')).toEqual({ type: 'run.failed', data: { error: 'boom', code: 'runner.error', retryable: false } });
    expect(failed('slow', 'upstream.timeout', true).data).toEqual({ error: 'slow', code: 'upstream.timeout', retryable: true });
    expect(stateUpdated('conversation', 'mood', 'happy')).toEqual({ type: 'state.updated', data: { scope: 'conversation', key: 'mood', value: 'happy' } });
    expect(artifactCreated({ artifact_type: 'file', name: 'a.txt', mime_type: 'text/plain', content: 'abc' }).data).toEqual({
      artifact_type: 'file',
      name: 'a.txt',
      mime_type: 'text/plain',
      content_base64: 'YWJj',
      size_bytes: 3,
    });
    expect(toolStarted('exec', { cmd: 'ls' }, 't1')).toEqual({
      type: 'tool.call.started',
      data: { tool_name: 'exec', parameters: { cmd: 'ls' }, tool_call_id: 't1' },
    });
    expect(toolCompleted('exec', { result: { ok: 1 } }).data).toEqual({ tool_name: 'exec', result: { ok: 1 }, error: null });
    expect(actionRequested('react', { message_id: 'm1' })).toEqual({
      type: 'action.requested',
      data: { action: 'react', target: { message_id: 'm1' }, payload: null },
    });
  });
});

describe('runInProcess', () => {
  it('runs a runner against API handlers and returns stamped results in order', async () => {
    const runner = defineRunner({
      async *run(ctx, api) {
        const colour = await api.state.get('conversation', 'colour');
        await api.state.set('conversation', 'seen', true);
        yield delta('a');
        yield message(`${ctx.input.text ?? ''}:${String(colour)}`);
        yield completed();
      },
    });
    const plugin = definePlugin({ runners: { default: runner } });
    const calls: unknown[] = [];
    const results = await runInProcess(
      plugin,
      'default',
      { input: { text: 'hi' }, run_id: 'run-1' },
      {
        api: {
          'state.get': (p) => {
            calls.push(p);
            return { value: 'blue' };
          },
          'state.set': (p) => {
            calls.push(p);
            return { success: true };
          },
        },
      },
    );
    expect(types(results)).toEqual(['message.delta', 'message.completed', 'run.completed']);
    expect(results[1]?.data).toEqual({ message: { role: 'assistant', content: 'hi:blue' } });
    expect(results.map((r) => r.run_id)).toEqual(['run-1', 'run-1', 'run-1']);
    expect(results.map((r) => r.sequence)).toEqual([0, 1, 2]);
    expect(results.every((r) => typeof r.timestamp === 'number')).toBe(true);
    expect(calls).toEqual([
      { run_id: 'run-1', scope: 'conversation', key: 'colour' },
      { run_id: 'run-1', scope: 'conversation', key: 'seen', value: true },
    ]);
  });

  it('throws ApiCallError with the AgentAPIError for a refusal, a missing handler and bad arguments', async () => {
    const errors: unknown[] = [];
    const plugin = definePlugin({
      runners: {
        default: defineRunner({
          async *run(_ctx, api) {
            for (const attempt of [
              () => api.history.page({}),
              () => api.events.get('ev-1'),
              () => api.call('state.get', { scope: 'galaxy' as 'runner', key: 'k' }),
            ]) {
              try {
                await attempt();
              } catch (err) {
                errors.push(err);
              }
            }
            yield completed();
          },
        }),
      },
    });
    await runInProcess(
      plugin,
      'default',
      {},
      {
        api: {
          'history.page': () => {
            throw new ApiCallError('history.page', {
              code: 'unauthorized',
              message: 'history is off',
              retryable: false,
              details: { reason: 'permission_denied' },
            });
          },
          'state.get': () => ({ value: 1 }),
        },
      },
    );
    expect(errors.every((e) => e instanceof ApiCallError)).toBe(true);
    const [refused, missing, invalid] = errors.filter((e): e is ApiCallError => e instanceof ApiCallError);
    expect(refused?.code).toBe('unauthorized');
    expect(refused?.details).toEqual({ reason: 'permission_denied' });
    expect(missing?.code).toBe('unauthorized');
    expect(missing?.details.reason).toBe('no_test_handler');
    expect(invalid?.code).toBe('invalid_argument');
  });

  it('rejects a result that does not match the method result schema', async () => {
    let caught: unknown;
    const plugin = definePlugin({
      runners: {
        default: defineRunner({
          async *run(_ctx, api) {
            try {
              await api.state.get('conversation', 'k');
            } catch (err) {
              caught = err;
            }
          },
        }),
      },
    });
    await runInProcess(plugin, 'default', {}, { api: { 'state.get': () => ({ nope: true }) } });
    expect(caught).toBeInstanceOf(ApiCallError);
    expect(caught instanceof ApiCallError && caught.details.reason).toBe('invalid_result');
  });

  it('streams model chunks to the callback', async () => {
    const plugin = definePlugin({
      runners: {
        default: defineRunner({
          async *run(_ctx, api) {
            const seen: unknown[] = [];
            const final = await api.models.stream({ model_id: 'm', messages: [{ role: 'user', content: 'hi' }] }, (c) => seen.push(c.content));
            yield message(`${seen.join(',')}|${String(final.content)}`);
          },
        }),
      },
    });
    const results = await runInProcess(
      plugin,
      'default',
      {},
      {
        api: {
          'models.stream': (_p, tools) => {
            tools.chunk({ content: 'a' });
            tools.chunk({ content: 'ab' });
            return { message: { role: 'assistant', content: 'ab' } };
          },
        },
      },
    );
    expect(results[0]?.data).toEqual({ message: { role: 'assistant', content: 'a,ab|ab' } });
  });

  it('invokeReply and streamReply give the whole reply; a reply without usage reads null', async () => {
    const plugin = definePlugin({
      runners: {
        default: defineRunner({
          async *run(_ctx, api) {
            const args = { model_id: 'm', messages: [{ role: 'user', content: 'hi' }] };
            const invoked = await api.models.invokeReply(args);
            const streamed = await api.models.streamReply(args, () => {});
            yield message(JSON.stringify([invoked, streamed]));
          },
        }),
      },
    });
    const usage = { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 };
    const results = await runInProcess(
      plugin,
      'default',
      {},
      {
        api: {
          'models.invoke': () => ({ message: { role: 'assistant', content: 'a' }, usage, finish_reason: 'stop', model: 'up' }),
          'models.stream': () => ({ message: { role: 'assistant', content: 'b' } }),
        },
      },
    );
    const content = (results[0]?.data as { message: { content: string } }).message.content;
    expect(JSON.parse(content)).toEqual([
      { message: { role: 'assistant', content: 'a' }, usage, finish_reason: 'stop', model: 'up' },
      { message: { role: 'assistant', content: 'b' }, usage: null, finish_reason: null, model: null },
    ]);
  });

  it('turns a throw into run.failed runner.exception', async () => {
    const plugin = definePlugin({
      runners: {
        default: defineRunner({
          async *run() {
            yield message('partial');
            throw new Error('kaboom');
          },
        }),
      },
    });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const results = await runInProcess(plugin, 'default');
    stderr.mockRestore();
    expect(types(results)).toEqual(['message.completed', 'run.failed']);
    expect(results[1]?.data).toEqual({ error: 'kaboom', code: 'runner.exception', retryable: false });
  });

  it('answers an unknown runner name with run.failed runner.not_found', async () => {
    const plugin = definePlugin({ runners: { default: defineRunner({ async *run() {} }) } });
    const results = await runInProcess(plugin, 'other');
    expect(results[0]).toMatchObject({ type: 'run.failed', data: { code: 'runner.not_found' } });
  });

  it('aborts ctx.signal on cancel; the runner decides to stop', async () => {
    const ac = new AbortController();
    let reason: unknown;
    const plugin = definePlugin({
      runners: {
        default: defineRunner({
          async *run(ctx) {
            yield delta('a');
            await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
            reason = ctx.signal.reason;
          },
        }),
      },
    });
    const done = runInProcess(plugin, 'default', {}, { signal: ac.signal });
    await new Promise((r) => setImmediate(r));
    ac.abort();
    expect(types(await done)).toEqual(['message.delta']);
    expect(reason).toBeInstanceOf(DOMException);
  });

  it('aborts ctx.signal shortly after the deadline passes (the host cancels at the deadline itself)', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    let aborted = false;
    const plugin = definePlugin({
      runners: {
        default: defineRunner({
          async *run(ctx) {
            await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
            aborted = ctx.signal.aborted;
          },
        }),
      },
    });
    const done = runInProcess(plugin, 'default', { runtime: { deadline_at: 1_000_000 / 1000 + 5 } });
    await vi.advanceTimersByTimeAsync(5000);
    expect(aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(SDK_DEADLINE_GRACE_MS);
    await done;
    expect(aborted).toBe(true);
  });

  it('createTestContext builds a valid context and merges overrides', () => {
    const ctx = createTestContext({ config: { a: 1 }, conversation: { conversation_id: 'c9' } });
    expect(ctx.config).toEqual({ a: 1 });
    expect(ctx.conversation?.conversation_id).toBe('c9');
    expect(ctx.conversation?.thread_id).toBeNull();
    expect(ctx.runtime.trace_id).toBe(ctx.run_id);
  });
});

describe('callTimeoutMs', () => {
  it('uses the method default, bounded by the run deadline, never below 1 ms (§6.7)', () => {
    const now = 1_000_000;
    expect(callTimeoutMs('models.invoke', null, undefined, now)).toBe(120_000);
    expect(callTimeoutMs('tools.call', null, undefined, now)).toBe(180_000);
    expect(callTimeoutMs('state.get', null, undefined, now)).toBe(15_000);
    expect(callTimeoutMs('state.get', null, 500, now)).toBe(500);
    expect(callTimeoutMs('models.invoke', now / 1000 + 2, undefined, now)).toBe(2000);
    expect(callTimeoutMs('models.invoke', now / 1000 - 10, undefined, now)).toBe(1);
    expect(callTimeoutMs('custom.thing', null, undefined, now)).toBe(30_000);
  });
});
