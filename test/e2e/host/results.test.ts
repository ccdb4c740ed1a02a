// Acceptance §4, result stream handling (AC-070 … AC-083), against the built CLI.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  delta,
  done,
  dump,
  emit,
  errorOf,
  eventPath,
  list,
  parseLines,
  pick,
  probe,
  reports,
  say,
  scenario,
  str,
  summaries,
  type Scenario,
  type Step,
} from './harness.js';

/**
 * A runner that writes `ctx.config.raw_results` as `run/result` notifications of the current run,
 * bypassing the SDK's checks, then ends the generator.
 */
const RAW_RESULTS = probe(`
  for (const result of ctx.config.raw_results ?? []) {
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'run/result', params: { run_id: ctx.run_id, result } }) + '\\n');
  }
  await new Promise((resolve) => setTimeout(resolve, 200));`);

async function assistantItems(s: Scenario): Promise<unknown[]> {
  return list(await s.page(['transcript', 'page', '--conversation', 'c1']), 'items').filter((i) => pick(i, 'role') === 'assistant');
}

async function protocolFailure(s: Scenario, script: Step[], label: string): Promise<string> {
  const r = await s.run(script, { json: true });
  expect(r.exitCode, label).toBe(1);
  const err = errorOf(r.stdout);
  expect(err?.code, label).toBe('runner.protocol_error');
  return String(err?.message);
}

describe('result stream handling', () => {
  it('AC-070 unknown result type', async () => {
    const s = await scenario();
    const r = await s.run([say('x'), emit('telemetry.custom'), done()]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('x\n');
    expect(r.stderr).toMatch(/warning.*telemetry\.custom/);
  });

  it('AC-071 result shape violations', async () => {
    const s = await scenario();
    const raw = await s.addPlugin('raw', { mainJs: RAW_RESULTS });
    const cfg = await s.writeJson('raw.json', { raw_results: [{ data: {} }] });
    const r = await s.lbot(['--json', 'run', '--event', eventPath('msg.json'), '--runner', raw, '--config', cfg]);
    expect(r.exitCode, r.stderr).toBe(1);
    const err = errorOf(r.stdout);
    expect(err?.code).toBe('runner.protocol_error');
    expect(String(err?.message)).toMatch(/type/i);
    expect(String(err?.message)).toMatch(/missing/i);

    await protocolFailure(s, [emit('message.delta', {}), done()], 'delta without chunk');
    for (const [label, data] of [
      ['message without role', { message: { content: 42 } }],
      ['message missing', {}],
    ] as const) {
      await protocolFailure(s, [emit('message.completed', data), done()], label);
    }
    expect(await assistantItems(s)).toEqual([]);
  });

  it('AC-074 runner-reported failure', async () => {
    const s = await scenario();
    const r = await s.run([emit('run.failed', { code: 'runner.error', error: 'upstream 502', retryable: true })], { json: true });
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toContain('runner.error');
    expect(r.stderr).toContain('upstream 502');
    const [summary] = summaries(r.stdout);
    expect(summary).toMatchObject({ status: 'failed', retryable: true, error: { code: 'runner.error' } });

    const bare = await s.run([emit('run.failed', { error: 'no code given' })], { json: true });
    expect(bare.exitCode, bare.stderr).toBe(1);
    expect(errorOf(bare.stdout)?.code).toBe('unknown');
    expect(bare.stderr).toContain('error[unknown]');
  });

  it('AC-075 no output is a failure', async () => {
    const s = await scenario();
    const r = await s.run([done()]);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('error[runner.no_output]');
    const json = await s.run([done()], { json: true });
    expect(errorOf(json.stdout)?.code).toBe('runner.no_output');
    expect(await assistantItems(s)).toEqual([]);
  });

  it('AC-076 final message on run.completed', async () => {
    const s = await scenario();
    const r = await s.run([done({ message: { role: 'assistant', content: 'done' } })]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('done\n');
    expect((await assistantItems(s)).map((i) => pick(i, 'content'))).toEqual(['done']);
  });

  it('AC-077 tool notices are observed, not delivered', async () => {
    const s = await scenario();
    const script = [
      emit('tool.call.started', { tool_call_id: 't1', tool_name: 'echo', parameters: {} }),
      say('msg'),
      emit('tool.call.completed', { tool_call_id: 't1', tool_name: 'echo', result: {}, error: null }),
      done(),
    ];
    const r = await s.run(script);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('msg\n');
    const verbose = await s.run(script, { json: true, verbose: true });
    expect(verbose.exitCode, verbose.stderr).toBe(0);
    const types = parseLines(verbose.stdout).map((l) => l.type);
    expect(types).toEqual(['tool.call.started', 'message.completed', 'tool.call.completed', 'run.summary']);
    const record = await s.json(['runs', 'show', str(summaries(verbose.stdout)[0], 'run_id')]);
    const observed = list(record, 'observed').map((o) => pick(o, 'type'));
    expect(observed).toEqual(['tool.call.started', 'tool.call.completed']);
  });

  it('AC-079 oversized single result', async () => {
    const s = await scenario();
    const huge = 'z'.repeat(2 * 1024 * 1024);
    const r = await s.run([say(huge), done()], { json: true });
    expect(r.exitCode, r.stderr).toBe(0);
    const [text] = parseLines(r.stdout)
      .filter((l) => l.type === 'message.completed')
      .map((l) => String(pick(l, 'data.message.content')));
    expect(text).toBe(`${'z'.repeat(10_000)}...[truncated]`);
    expect(text).toHaveLength(10_014);
    expect(r.stderr).toMatch(/warning.*\d{7}/);
  });

  it('AC-080 malformed state.updated', async () => {
    const s = await scenario();
    await protocolFailure(s, [emit('state.updated', { key: 'k', value: 1 }), say('x'), done()], 'no scope');
    await protocolFailure(s, [emit('state.updated', { scope: 'conversation', value: 1 }), say('x'), done()], 'no key');
    expect(await s.jsonList(['state', 'list'])).toEqual([]);
  });

  it('AC-081 malformed artifact.created', async () => {
    const s = await scenario();
    const file = { artifact_type: 'file', name: 'f.bin' };
    const cases: Array<[string, Step, RegExp]> = [
      ['foreign run_id', { emit: { type: 'artifact.created', data: { ...file, content_base64: 'YQ==' }, run_id: randomUUID() } }, /run_id/],
      ['no artifact_type', emit('artifact.created', { name: 'f.bin', content_base64: 'YQ==' }), /artifact_type/],
      ['bad base64', emit('artifact.created', { ...file, content_base64: '***' }), /base64/],
      ['1 MiB + 1', emit('artifact.created', { ...file, content_base64: Buffer.alloc(1024 * 1024 + 1, 1).toString('base64') }), /1048576|limit/],
    ];
    for (const [label, step, reason] of cases) {
      expect(await protocolFailure(s, [step, say('x'), done()], label), label).toMatch(reason);
    }
    expect(await s.jsonList(['artifacts', 'list'])).toEqual([]);
    const exact = await s.run([
      emit('artifact.created', { ...file, artifact_id: 'one-mib', content_base64: Buffer.alloc(1024 * 1024, 1).toString('base64') }),
      say('x'),
      done(),
    ]);
    expect(exact.exitCode, exact.stderr).toBe(0);
    expect(await s.json(['artifacts', 'show', 'one-mib'])).toMatchObject({ size_bytes: 1024 * 1024 });
  });

  it('AC-082 stray results after the terminal result', async () => {
    const s = await scenario();
    const r = await s.run([say('x'), done(), say('late')]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('x\n');
    expect(r.stderr).toMatch(/warning.*message\.completed/);
    expect((await assistantItems(s)).map((i) => pick(i, 'content'))).toEqual(['x']);
  });

  it('AC-082 variant: a result for an unknown run', async () => {
    const s = await scenario();
    const stray = randomUUID();
    const notification = {
      jsonrpc: '2.0',
      method: 'run/result',
      params: { run_id: stray, result: { type: 'message.completed', data: { message: { role: 'assistant', content: 'stray' } } } },
    };
    const r = await s.run([{ emit_raw: JSON.stringify(notification) }, say('valid'), done()]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('valid\n');
    expect(r.stderr).toContain(stray);
    expect(r.stderr).toMatch(/protocol/i);
    expect((await assistantItems(s)).map((i) => pick(i, 'content'))).toEqual(['valid']);
  });

  it('AC-083 non-streaming delivery', async () => {
    const s = await scenario();
    const base = JSON.parse(await readFile(eventPath('msg.json'), 'utf8')) as Record<string, unknown>;
    const event = await s.writeJson('nostream.json', { ...base, delivery: { surface: 'cli', supports_streaming: false } });
    const r = await s.run([dump, delta('hel'), delta('lo'), say('hello'), done()], { json: true, event });
    expect(r.exitCode, r.stderr).toBe(0);
    const [ctx] = reports(r.stdout);
    expect(pick(ctx, 'runtime.metadata.streaming_supported')).toBe(false);
    const lines = parseLines(r.stdout);
    expect(lines.filter((l) => l.type === 'message.delta')).toEqual([]);
    expect(lines.filter((l) => l.type === 'message.completed')).toHaveLength(2);
    expect((await assistantItems(s)).map((i) => pick(i, 'content')).slice(1)).toEqual(['hello']);
  });
});
