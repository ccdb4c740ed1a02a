// Real plugin processes through the launcher: initialize, runs, proxy calls, env allowlist, failures
// (AC-018, AC-082, AC-194, AC-196, AC-198, AC-199, AC-211) and process-group cleanup after each test.
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import { isRecord } from '../../../src/core/json.js';
import { ApiError } from '../../../src/core/host/api-error.js';
import type { PluginConnection, PluginSpec, ProxyCall, ProxyCallHandler } from '../../../src/core/host/ports.js';
import type { Execution } from '../../../src/core/protocol/index.js';
import { createPluginLauncher, type PluginLauncherOptions } from '../../../src/runtime/plugins/launcher.js';
import type { PluginWarning } from '../../../src/runtime/plugins/connection.js';
import { liveProcessGroups } from '../../../src/runtime/process/group.js';
import { createTestContext } from '../../../src/sdk/testing.js';
import { createTempPlugins, waitGroupGone, type TempPlugins } from '../../helpers/plugins.js';

const FIXTURES = ['echo', 'scripted', 'giant-line', 'no-initialize', 'bad-start', 'crash-on-start', 'stubborn'];

let plugins: TempPlugins;
const started: PluginConnection[] = [];
const warnings: PluginWarning[] = [];

beforeAll(async () => {
  plugins = await createTempPlugins(FIXTURES);
});
afterAll(async () => {
  await plugins.cleanup();
});
afterEach(async () => {
  const connections = started.splice(0);
  await Promise.allSettled(connections.map((c) => c.close()));
  for (const c of connections) {
    if (c.pgid !== null) expect(await waitGroupGone(c.pgid), `process group ${c.pgid} of ${c.identity} is gone`).toBe(true);
  }
  expect(liveProcessGroups()).toEqual([]);
  warnings.length = 0;
});

function spec(name: string, execution: Execution = { node: { path: 'main.js' } }, env: Record<string, string> = {}): PluginSpec {
  return { identity: `acme/${name}`, dir: plugins.dir(name), execution, env };
}

const noApi: ProxyCallHandler = async (call) => {
  throw new ApiError('unauthorized', `no API in this test (${call.method})`, 'permission_denied');
};

async function start(
  name: string,
  opts: { execution?: Execution; env?: Record<string, string>; api?: ProxyCallHandler; launcher?: PluginLauncherOptions } = {},
): Promise<PluginConnection> {
  const launcher = createPluginLauncher({
    onWarning: (w) => warnings.push(w),
    onSpawn: (c) => started.push(c),
    graceMs: 500,
    ...opts.launcher,
  });
  return launcher.start(spec(name, opts.execution, opts.env), opts.api ?? noApi);
}

function startFailure(name: string, execution: Execution, launcher: PluginLauncherOptions = {}): Promise<LbotError> {
  return createPluginLauncher({ ...launcher, onSpawn: (c) => started.push(c) })
    .start(spec(name, execution), noApi)
    .then(
      () => {
        throw new Error(`plugin ${name} started unexpectedly`);
      },
      (err: unknown) => {
        expect(err).toBeInstanceOf(LbotError);
        if (!(err instanceof LbotError)) throw err;
        return err;
      },
    );
}

type Script = unknown[];

function runParams(script: Script, extra: Record<string, unknown> = {}) {
  const context = createTestContext({ config: { script, ...extra } });
  return { run_id: context.run_id, runner_name: 'default', context };
}

/** Reads a nested field of an untyped value. */
function field(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) current = isRecord(current) ? current[key] : undefined;
  return current;
}

function messageText(result: unknown): string {
  const content = field(result, 'data', 'message', 'content');
  return typeof content === 'string' ? content : '';
}

async function runScript(conn: PluginConnection, script: Script): Promise<{ results: unknown[]; status: string }> {
  const params = runParams(script);
  const results: unknown[] = [];
  const reply = await conn.run(params, (r) => results.push(r));
  return { results, status: reply.status };
}

async function runError(promise: Promise<unknown>): Promise<LbotError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof LbotError) return err;
    throw err;
  }
  throw new Error('expected the run to fail');
}

describe('plugin launcher', () => {
  it('starts the echo runner, answers a run in order, and stops its group on close()', async () => {
    const conn = await start('echo');
    expect(conn.identity).toBe('acme/echo');
    expect(conn.pgid).toBeTypeOf('number');
    const context = createTestContext({ input: { text: 'hello there', contents: [{ type: 'text', text: 'hello there' }] } });
    const results: unknown[] = [];
    const reply = await conn.run({ run_id: context.run_id, runner_name: 'default', context }, (r) => results.push(r));
    expect(reply.status).toBe('completed');
    expect(results.map((r) => field(r, 'type'))).toEqual(['message.completed', 'run.completed']);
    expect(messageText(results[0])).toBe('hello there');
    expect(field(results[0], 'run_id')).toBe(context.run_id);
    expect(conn.activeRuns()).toEqual([]);
    await conn.close();
    await conn.close();
    expect(await conn.exited).toBeNull();
  });

  it('echo describes an event without text', async () => {
    const conn = await start('echo');
    const context = createTestContext({ input: { text: null, contents: [] }, event: { event_type: 'group.member_joined' } });
    const results: unknown[] = [];
    await conn.run({ run_id: context.run_id, runner_name: 'default', context }, (r) => results.push(r));
    expect(messageText(results[0])).toContain('group.member_joined');
  });

  it('multiplexes concurrent runs on one process by run_id', async () => {
    const conn = await start('scripted');
    const slow = runParams([
      { sleep_ms: 200 },
      { emit: { type: 'message.completed', data: { message: { role: 'assistant', content: 'slow' } } } },
      { emit: { type: 'run.completed', data: {} } },
    ]);
    const fast = runParams([
      { emit: { type: 'message.completed', data: { message: { role: 'assistant', content: 'fast' } } } },
      { emit: { type: 'run.completed', data: {} } },
    ]);
    const slowResults: unknown[] = [];
    const fastResults: unknown[] = [];
    const order: string[] = [];
    const a = conn.run(slow, (r) => slowResults.push(r)).then(() => order.push('slow'));
    const b = conn.run(fast, (r) => fastResults.push(r)).then(() => order.push('fast'));
    expect(conn.activeRuns()).toHaveLength(2);
    await Promise.all([a, b]);
    expect(order).toEqual(['fast', 'slow']);
    expect(slowResults.map(messageText)[0]).toBe('slow');
    expect(fastResults.map(messageText)[0]).toBe('fast');
  });

  it('passes only allowlisted variables, the protocol variables and the binding env (AC-211)', async () => {
    const hostEnv = { ...process.env, AWS_SECRET_ACCESS_KEY: 'leak', LBOT_TEST_SECRET: 's3cr3t', NODE_OPTIONS: '--max-old-space-size=64', LANG: 'C.UTF-8' };
    const conn = await start('scripted', { env: { FROM_BINDING: 'yes' }, launcher: { hostEnv } });
    const { results } = await runScript(conn, [{ dump_env: true }, { emit: { type: 'run.completed', data: {} } }]);
    const env: unknown = JSON.parse(messageText(results[0]));
    if (!isRecord(env)) throw new Error('dump_env did not print an object');
    expect(env.AWS_SECRET_ACCESS_KEY).toBeUndefined();
    expect(env.LBOT_TEST_SECRET).toBeUndefined();
    expect(env.NODE_OPTIONS).toBeUndefined();
    expect(env.LBOT_PROTOCOL_VERSION).toBe('1');
    expect(env.LBOT_PLUGIN_IDENTITY).toBe('acme/scripted');
    expect(env.FROM_BINDING).toBe('yes');
    expect(env.LANG).toBe('C.UTF-8');
    expect(env.LBOT_PROCESS_FAMILY).toMatch(/^[0-9a-f]{24}$/);
    const allowed = new Set([
      'PATH',
      'HOME',
      'LANG',
      'LC_ALL',
      'TZ',
      'TMPDIR',
      'LBOT_PROTOCOL_VERSION',
      'LBOT_PLUGIN_IDENTITY',
      'LBOT_PROCESS_FAMILY',
      'FROM_BINDING',
    ]);
    expect(Object.keys(env).filter((k) => !allowed.has(k))).toEqual([]);
  });

  it('stamps the caller identity from the connection and maps refusals to AgentAPIError', async () => {
    const calls: ProxyCall[] = [];
    const api: ProxyCallHandler = async (call) => {
      calls.push(call);
      if (call.method === 'state.get') return { value: 'blue' };
      if (call.method === 'state.set') throw new ApiError('unauthorized', 'state is disabled for this binding', 'state_disabled');
      throw new Error('database is on fire');
    };
    const conn = await start('scripted', { api });
    const foreign = randomUUID();
    const { results, status } = await runScript(conn, [
      { api: { action: 'state.get', args: { scope: 'conversation', key: 'colour', caller_plugin_identity: 'evil/plugin' } }, report: true },
      { api: { action: 'state.set', args: { scope: 'conversation', key: 'colour', value: 1 } }, report: true },
      { api: { action: 'history.page', args: {} }, as_run_id: foreign, report: true },
      { emit: { type: 'run.completed', data: {} } },
    ]);
    expect(status).toBe('completed');
    const outcomes: unknown[] = results.slice(0, 3).map((r) => JSON.parse(messageText(r)));
    expect(outcomes[0]).toEqual({ ok: true, result: { value: 'blue' } });
    expect(outcomes[1]).toEqual({
      ok: false,
      error: { code: 'unauthorized', message: 'state is disabled for this binding', retryable: false, details: { reason: 'state_disabled' } },
    });
    expect(outcomes[2]).toMatchObject({ ok: false, error: { code: 'runtime_error', message: 'database is on fire', details: { reason: 'downstream_error' } } });
    expect(calls.map((c) => c.caller_plugin)).toEqual(['acme/scripted', 'acme/scripted', 'acme/scripted']);
    expect(calls[0]?.params.caller_plugin_identity).toBeUndefined();
    expect(calls[2]?.params.run_id).toBe(foreign);
  });

  it('answers an unknown method with -32601 and fails only that run, after the host has seen (and audited) it', async () => {
    const seen: ProxyCall[] = [];
    const conn = await start('scripted', {
      api: async (call) => {
        seen.push(call);
        throw new ApiError('invalid_argument', `unknown method ${call.method}`, 'unknown_method');
      },
    });
    const params = runParams([{ api: { action: 'nope.method', args: {} }, report: true }, { emit: { type: 'run.completed', data: {} } }]);
    const err = await runError(conn.run(params, () => undefined));
    expect(seen.map((c) => [c.method, c.caller_plugin, c.params.run_id])).toEqual([['nope.method', 'acme/scripted', params.run_id]]);
    expect(err.code).toBe('runner.protocol_error');
    expect(err.message).toContain('nope.method');
    const next = await runScript(conn, [{ emit: { type: 'run.completed', data: {} } }]);
    expect(next.status).toBe('completed');
  });

  it('drops a result for an unknown run with a warning naming it and fails nothing (AC-082)', async () => {
    const conn = await start('scripted');
    const stray = randomUUID();
    const line = JSON.stringify({
      jsonrpc: '2.0',
      method: 'run/result',
      params: { run_id: stray, result: { type: 'message.completed', data: { message: { role: 'assistant', content: 'stray' } } } },
    });
    const { results, status } = await runScript(conn, [
      { emit_raw: line },
      { emit: { type: 'message.completed', data: { message: { role: 'assistant', content: 'x' } } } },
      { emit: { type: 'run.completed', data: {} } },
    ]);
    expect(status).toBe('completed');
    expect(results.map(messageText)[0]).toBe('x');
    expect(warnings.some((w) => w.run_id === stray && w.message.includes(stray))).toBe(true);
  });

  it('drops results that arrive after the run was answered, naming the finished run', async () => {
    const conn = await start('scripted');
    const params = runParams([{ emit: { type: 'run.completed', data: {} } }]);
    await conn.run(params, () => undefined);
    const late = JSON.stringify({ jsonrpc: '2.0', method: 'run/result', params: { run_id: params.run_id, result: { type: 'message.completed', data: {} } } });
    await runScript(conn, [{ emit_raw: late }, { emit: { type: 'run.completed', data: {} } }]);
    expect(warnings.some((w) => w.run_id === params.run_id && w.message.includes('finished'))).toBe(true);
  });

  it('reports a runner exception as run.failed runner.exception and status failed', async () => {
    const conn = await start('scripted');
    const { results, status } = await runScript(conn, [{ bogus: 1 }]);
    expect(status).toBe('failed');
    expect(results.at(-1)).toMatchObject({ type: 'run.failed', data: { code: 'runner.exception', retryable: false } });
  });

  it('fails in-flight runs with runner.crashed naming the status and stderr tail (AC-194)', async () => {
    const conn = await start('scripted');
    const results: unknown[] = [];
    const params = runParams([
      { emit: { type: 'message.delta', data: { chunk: { role: 'assistant', content: 'par' } } } },
      { stderr: 'about to fall over' },
      { sleep_ms: 100 },
      { exit: 137 },
    ]);
    const err = await runError(conn.run(params, (r) => results.push(r)));
    expect(err.code).toBe('runner.crashed');
    expect(err.message).toContain('137');
    expect(err.message).toContain('about to fall over');
    expect(results).toHaveLength(1);
    expect(await conn.exited).toMatchObject({ code: 'runner.crashed' });
    expect(conn.stderrTail()).toContain('about to fall over');
  });

  it('treats a non-JSON line as a corrupt channel and quotes it (AC-198)', async () => {
    const conn = await start('scripted');
    const err = await runError(conn.run(runParams([{ emit_raw: 'hello world' }, { sleep_ms: 60000 }]), () => undefined));
    expect(err.code).toBe('runner.protocol_error');
    expect(err.message).toContain('"hello world"');
    expect(await conn.exited).toMatchObject({ code: 'runner.protocol_error' });
  });

  it('quotes only the first 80 bytes of an offending line', async () => {
    const conn = await start('scripted');
    const long = `${'x'.repeat(80)}TAIL-NOT-QUOTED`;
    const err = await runError(conn.run(runParams([{ emit_raw: long }, { sleep_ms: 60000 }]), () => undefined));
    expect(err.message).toContain('x'.repeat(80));
    expect(err.message).not.toContain('TAIL-NOT-QUOTED');
  });

  it('ends the run once a line passes 8 MiB without buffering the 64 MiB line (AC-199)', async () => {
    const conn = await start('giant-line');
    const context = createTestContext();
    let peak = 0;
    const base = process.memoryUsage().rss;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss - base);
    }, 5);
    try {
      const err = await runError(conn.run({ run_id: context.run_id, runner_name: 'default', context }, () => undefined));
      expect(err.code).toBe('runner.protocol_error');
      expect(err.message).toContain(String(8 * 1024 * 1024));
      expect(err.message).toContain('aaaa');
    } finally {
      clearInterval(sampler);
    }
    expect(peak).toBeLessThan(4 * 8 * 1024 * 1024);
  });

  it('a cancelled run ends as cancelled when the runner honours its signal', async () => {
    const conn = await start('scripted');
    const params = runParams([{ emit: { type: 'message.delta', data: { chunk: { role: 'assistant', content: 'a' } } } }, { sleep_ms: 60000 }]);
    const done = conn.run(params, () => conn.cancel(params.run_id));
    expect((await done).status).toBe('cancelled');
  });

  it('aborts the runner signal at the context deadline', async () => {
    const conn = await start('scripted');
    const context = createTestContext({ config: { script: [{ sleep_ms: 60000 }] }, runtime: { deadline_at: Date.now() / 1000 + 0.3 } });
    const reply = await conn.run({ run_id: context.run_id, runner_name: 'default', context }, () => undefined);
    expect(reply.status).toBe('cancelled');
  });

  it('kill() stops a runner that ignores cancel, including children in its group (AC-196)', async () => {
    const conn = await start('scripted');
    const params = runParams([
      { ignore_cancel: true },
      { spawn: ['sleep', '600'] },
      { emit: { type: 'message.delta', data: { chunk: { role: 'assistant', content: 'a' } } } },
      { sleep_ms: 60000 },
    ]);
    let settled = false;
    const first = new Promise<void>((resolve) => {
      const done = conn.run(params, () => resolve());
      done.then(
        () => (settled = true),
        () => (settled = true),
      );
      void done.catch(() => undefined);
    });
    await first;
    conn.cancel(params.run_id);
    await new Promise((r) => setTimeout(r, 300));
    expect(settled).toBe(false);
    await conn.kill();
    expect(await conn.exited).toBeNull();
    if (conn.pgid !== null) expect(await waitGroupGone(conn.pgid)).toBe(true);
  });

  it('close() escalates to SIGKILL for a process that ignores shutdown and SIGTERM', async () => {
    const conn = await start('stubborn', { execution: { command: ['node', 'main.js'] }, launcher: { graceMs: 200, shutdownTimeoutMs: 200 } });
    await conn.close();
    expect(await conn.exited).toBeNull();
    expect(conn.stderrTail()).toContain('ignoring SIGTERM');
  });

  it('routes models.stream chunks to the runner and redirects console.log to stderr', async () => {
    const dir = await plugins.add('echo', 'streamer');
    await writeFile(
      path.join(dir, 'main.js'),
      `import { definePlugin, defineRunner, message, completed } from 'lbot/sdk';
export default definePlugin({ runners: { default: defineRunner({ async *run(ctx, api) {
  console.log('hello from console.log');
  const seen = [];
  const final = await api.models.stream({ model_id: 'm-fake', messages: [{ role: 'user', content: 'hi' }] }, (c) => seen.push(c.content));
  yield message(seen.join('|') + '=' + final.content);
  yield completed();
} }) } });
`,
    );
    const api: ProxyCallHandler = async (call) => {
      const streamId = String(call.params.stream_id);
      call.notify('models.stream/chunk', { run_id: String(call.params.run_id), stream_id: streamId, chunk: { role: 'assistant', content: 'FA' } });
      call.notify('models.stream/chunk', { run_id: String(call.params.run_id), stream_id: streamId, chunk: { role: 'assistant', content: 'FAKE' } });
      return { message: { role: 'assistant', content: 'FAKE' } };
    };
    const launcher = createPluginLauncher({ onSpawn: (c) => started.push(c) });
    const conn = await launcher.start({ identity: 'acme/echo', dir, execution: { node: { path: 'main.js' } }, env: {} }, api);
    const context = createTestContext();
    const results: unknown[] = [];
    await conn.run({ run_id: context.run_id, runner_name: 'default', context }, (r) => results.push(r));
    expect(messageText(results[0])).toBe('FA|FAKE=FAKE');
    expect(conn.stderrTail()).toContain('hello from console.log');
  });
});

describe('plugin start failures (AC-018)', () => {
  it('a missing command is runner.start_failed naming the command', async () => {
    const err = await startFailure('bad-start', { command: ['./does-not-exist'] });
    expect(err.code).toBe('runner.start_failed');
    expect(err.message).toContain('does-not-exist');
    expect(err.message).toContain('ENOENT');
  });

  it('an exit before initialize is runner.start_failed with the status and stderr tail', async () => {
    const err = await startFailure('crash-on-start', { command: ['node', 'main.js'] });
    expect(err.code).toBe('runner.start_failed');
    expect(err.message).toContain('status 3');
    expect(err.message).toContain('missing configuration, giving up');
  });

  it('no answer to initialize within the timeout is runner.start_failed', async () => {
    const err = await startFailure('no-initialize', { command: ['node', 'main.js'] }, { initializeTimeoutMs: 300 });
    expect(err.code).toBe('runner.start_failed');
    expect(err.message).toContain('did not answer initialize within 300 ms');
    expect(err.message).toContain('never answering');
  });

  it('execution.python goes to the LangBot SDK launcher, which refuses a Python without the SDK before spawning the plugin', async () => {
    const err = await startFailure('echo', { python: { path: 'main.py', attr: 'Runner' } });
    expect(err.code).toBe('runner.start_failed');
    expect(err.message).toContain('cannot import langbot_plugin');
    expect(err.hint).toContain('LBOT_LANGBOT_PYTHON');
  });

  it('an initialize answer naming another plugin is runner.protocol_error', async () => {
    const err = await createPluginLauncher({ onSpawn: (c) => started.push(c) })
      .start({ identity: 'acme/impostor', dir: plugins.dir('echo'), execution: { node: { path: 'main.js' } }, env: {} }, noApi)
      .then(
        () => new Error('started'),
        (e: unknown) => e,
      );
    expect(err instanceof LbotError && err.code).toBe('runner.protocol_error');
    expect(err instanceof Error && err.message).toContain('acme/echo');
  });

  it('a module without a definePlugin default export fails to start with the reason on stderr', async () => {
    const dir = await plugins.add('echo', 'not-a-plugin');
    await writeFile(path.join(dir, 'main.js'), 'export const x = 1;\n');
    const err = await createPluginLauncher({ onSpawn: (c) => started.push(c) })
      .start({ identity: 'acme/echo', dir, execution: { node: { path: 'main.js' } }, env: {} }, noApi)
      .then(
        () => new Error('started'),
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(LbotError);
    expect(err instanceof LbotError && err.code).toBe('runner.start_failed');
    expect(err instanceof Error && err.message).toContain('definePlugin');
  });
});
