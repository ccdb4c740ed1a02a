// The conformance catalogue on synthetic evidence: each rule-breaking behaviour fails exactly its check,
// warnings fail only with --strict, and the JUnit rendering is well-formed.
import { describe, expect, it } from 'vitest';
import { CATALOGUE, runChecks, type CheckResult } from '../../../src/core/conformance/checks.js';
import type { Evidence, ProbeName, ProbeRun } from '../../../src/core/conformance/evidence.js';
import { buildReport, renderJunit, renderText } from '../../../src/core/conformance/report.js';

const RUNNER = 'plugin:acme/echo/default';
const caps = {
  streaming: false,
  tool_calling: false,
  knowledge_retrieval: false,
  multimodal_input: false,
  event_context: true,
  platform_api: false,
  interrupt: false,
  stateful_session: false,
};

function run(probe: ProbeName, over: Partial<ProbeRun> = {}): ProbeRun {
  const run_id = `run-${probe}`;
  return {
    probe,
    runner_id: RUNNER,
    run_id,
    status: 'completed',
    error: null,
    results: [
      { type: 'message.completed', raw: { type: 'message.completed', data: { message: { role: 'assistant', content: 'ping' } } } },
      { type: 'run.completed', raw: { type: 'run.completed', data: {} } },
    ],
    reply: 'completed',
    cancelToReplyMs: probe === 'cancel' ? 5 : null,
    cancelSent: probe === 'cancel',
    killed: false,
    channel: null,
    api: [],
    warnings: [],
    deadlineS: probe === 'deadline' ? 1 : 10,
    ...over,
  };
}

const PROBES: ProbeName[] = ['message', 'message_no_stream', 'join', 'friend', 'cancel', 'deadline'];

function evidence(over: Partial<Evidence> = {}, runs: ProbeRun[] = PROBES.map((p) => run(p))): Evidence {
  return {
    files: {
      dir: '/p/echo',
      manifestError: null,
      componentWarnings: [],
      setAside: [],
      identity: 'acme/echo',
      runners: [{ id: RUNNER, runner_name: 'default', capabilities: caps }],
    },
    handshake: { ok: true, ms: 120 },
    probesBlocked: null,
    runs,
    shutdown: { exitedBySelf: true, ms: 10, code: 0, signal: null },
    graceMs: 2000,
    ...over,
  };
}

const failing = (results: CheckResult[]) => results.filter((c) => c.status === 'fail').map((c) => c.id);
const statusOf = (results: CheckResult[], id: string) => results.find((c) => c.id === id)?.status;
const withRuns = (edit: (r: ProbeRun) => ProbeRun) =>
  evidence(
    {},
    PROBES.map((p) => edit(run(p))),
  );

describe('conformance checks', () => {
  it('a well-behaved runner passes every check that applies', () => {
    const results = runChecks(evidence());
    expect(results.map((c) => c.id)).toEqual(CATALOGUE.map((c) => c.id));
    expect(failing(results)).toEqual([]);
    for (const id of [
      'manifest.valid',
      'runner.id_format',
      'initialize.handshake',
      'run.terminal_result',
      'stdout.protocol_only',
      'cancel.honoured',
      'deadline.honoured',
      'api.authorized',
      'api.own_run_id',
    ]) {
      expect(statusOf(results, id), id).toBe('pass');
    }
    expect(statusOf(results, 'streaming.consistent')).toBe('n/a');
    expect(statusOf(results, 'state.within_limits')).toBe('n/a');
  });

  it('no terminal result fails run.terminal_result only', () => {
    const r = runChecks(withRuns((x) => ({ ...x, results: x.results.filter((y) => y.type !== 'run.completed') })));
    expect(failing(r)).toEqual(['run.terminal_result']);
    expect(r.find((c) => c.id === 'run.terminal_result')?.evidence).toContain('sent no run.completed or run.failed');
  });

  it('a terminal result without an answer to the run fails run.answered only', () => {
    const r = runChecks(withRuns((x) => (x.probe === 'cancel' || x.probe === 'deadline' ? x : { ...x, reply: null })));
    expect(failing(r)).toEqual(['run.answered']);
    expect(r.find((c) => c.id === 'run.answered')?.evidence).toMatch(/probe message .*never answered the run within the 2000 ms grace/);
  });

  it('a corrupted channel fails stdout.protocol_only and blocks what it cut short', () => {
    const channel = {
      code: 'runner.protocol_error',
      message: 'plugin acme/echo broke the protocol: the plugin wrote a line that is not JSON; the line starts with "debug"',
    };
    const r = runChecks(withRuns((x) => ({ ...x, status: 'failed', error: channel, channel, results: [] })));
    expect(failing(r)).toEqual(['stdout.protocol_only']);
    expect(statusOf(r, 'run.terminal_result')).toBe('blocked');
    expect(statusOf(r, 'cancel.honoured')).toBe('blocked');
  });

  it('no answer within the grace period after cancel fails cancel.honoured only', () => {
    const r = runChecks(withRuns((x) => (x.probe === 'cancel' ? { ...x, status: 'cancelled', reply: null, cancelToReplyMs: null, killed: true } : x)));
    expect(failing(r)).toEqual(['cancel.honoured']);
    expect(r.find((c) => c.id === 'cancel.honoured')?.evidence).toContain('killed the process group');
  });

  it('a late answer after the deadline fails deadline.honoured only', () => {
    const r = runChecks(withRuns((x) => (x.probe === 'deadline' ? { ...x, status: 'timed_out', cancelSent: true, cancelToReplyMs: 2600 } : x)));
    expect(failing(r)).toEqual(['deadline.honoured']);
  });

  it('an undeclared result type is a warning: the suite passes unless strict', () => {
    const custom = { type: 'custom.progress', raw: { type: 'custom.progress', data: {} } };
    const r = runChecks(withRuns((x) => ({ ...x, results: [custom, ...x.results] })));
    expect(failing(r)).toEqual(['results.declared']);
    expect(r.find((c) => c.id === 'results.declared')?.severity).toBe('warning');
    expect(buildReport({ pluginDir: '/p', plugin: 'acme/echo', strict: false, checks: r, durationMs: 5 }).ok).toBe(true);
    const strict = buildReport({ pluginDir: '/p', plugin: 'acme/echo', strict: true, checks: r, durationMs: 5 });
    expect(strict.ok).toBe(false);
    expect(strict.counts.fail).toBe(1);
    expect(renderText(buildReport({ pluginDir: '/p', plugin: 'acme/echo', strict: false, checks: r, durationMs: 5 }))).toMatch(/^WARN +results\.declared/m);
  });

  it('deltas on a non-streaming runner are undeclared; incremental deltas fail streaming.consistent', () => {
    const delta = (content: string) => ({ type: 'message.delta', raw: { type: 'message.delta', data: { chunk: { role: 'assistant', content } } } });
    const r1 = runChecks(withRuns((x) => (x.probe === 'message' ? { ...x, results: [delta('pi'), delta('ping'), ...x.results] } : x)));
    expect(failing(r1)).toEqual(['results.declared']);
    const streaming = evidence(
      { files: { ...evidence().files, runners: [{ id: RUNNER, runner_name: 'default', capabilities: { ...caps, streaming: true } }] } },
      PROBES.map((p) => (p === 'message' ? { ...run(p), results: [delta('hel'), delta('lo'), ...run(p).results] } : run(p))),
    );
    const r2 = runChecks(streaming);
    expect(failing(r2)).toEqual(['streaming.consistent']);
    expect(r2.find((c) => c.id === 'streaming.consistent')?.evidence).toContain('cumulative');
  });

  it('splits refused API calls into own-run and foreign-run findings', () => {
    const call = (as_run_id: string, code: string) => ({
      at: 1,
      action: 'state.get',
      resource: 'conversation:topic',
      decision: 'denied' as const,
      code,
      caller_plugin: 'acme/echo',
      as_run_id,
    });
    const foreign = runChecks(withRuns((x) => ({ ...x, api: [call('someone-else', 'unauthorized')] })));
    expect(failing(foreign)).toEqual(['api.own_run_id']);
    const unauthorized = runChecks(withRuns((x) => ({ ...x, api: [call(x.run_id ?? '', 'unauthorized')] })));
    expect(failing(unauthorized)).toEqual(['api.authorized']);
  });

  it('a failed handshake fails initialize.handshake and blocks every run check', () => {
    const r = runChecks(
      evidence({ handshake: { ok: false, code: 'runner.start_failed', message: 'did not answer initialize within 2000 ms' }, runs: [], shutdown: null }),
    );
    expect(failing(r)).toEqual(['initialize.handshake']);
    expect(statusOf(r, 'run.terminal_result')).toBe('blocked');
    expect(statusOf(r, 'shutdown.idle')).toBe('blocked');
  });

  it('an invalid manifest fails manifest.valid and blocks the rest', () => {
    const r = runChecks(
      evidence({
        files: {
          dir: '/p/x',
          manifestError: 'manifest.yaml is not valid YAML: bad indentation',
          componentWarnings: [],
          setAside: [],
          identity: null,
          runners: [],
        },
        handshake: null,
        runs: [],
        shutdown: null,
      }),
    );
    expect(failing(r)).toEqual(['manifest.valid']);
    expect(statusOf(r, 'components.valid')).toBe('blocked');
  });

  it('odd id segments fail runner.id_format; a crash on a non-message event fails events.non_message only', () => {
    const files = { ...evidence().files, runners: [{ id: 'plugin:Acme Corp/echo/default', runner_name: 'default', capabilities: caps }] };
    expect(failing(runChecks(evidence({ files })))).toEqual(['runner.id_format']);
    const crash = { code: 'runner.crashed', message: 'plugin acme/echo exited with status 1' };
    const r = runChecks(withRuns((x) => (x.probe === 'join' ? { ...x, status: 'failed', error: crash, channel: crash, results: [] } : x)));
    expect(failing(r)).toEqual(['events.non_message']);
  });

  it('a plugin that needs SIGTERM to stop fails shutdown.idle', () => {
    expect(failing(runChecks(evidence({ shutdown: { exitedBySelf: false, ms: 3100, code: null, signal: 'SIGTERM' } })))).toEqual(['shutdown.idle']);
  });
});

describe('JUnit report', () => {
  it('has one testcase per check, failures for failing checks, skipped for blocked and n/a, escaped text', () => {
    const r = runChecks(withRuns((x) => ({ ...x, results: x.results.filter((y) => y.type !== 'run.completed') })));
    const xml = renderJunit(buildReport({ pluginDir: '/p/<echo>', plugin: null, strict: false, checks: r, durationMs: 1234 }));
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')).toBe(true);
    expect(xml.match(/<testcase /g)).toHaveLength(CATALOGUE.length);
    expect(xml.match(/<failure /g)).toHaveLength(1);
    expect(xml).toContain('name="run.terminal_result"');
    expect(xml).toContain('/p/&lt;echo&gt;');
    expect(xml).toContain('failures="1"');
    expect(xml).toContain('time="1.234"');
    // Well-formed: every opened element is closed in order.
    const stack: string[] = [];
    for (const m of xml.matchAll(/<(\/?)([a-z]+)[^>]*?(\/?)>/g)) {
      const [, closing, name = '', selfClosing] = m;
      if (selfClosing) continue;
      if (closing) expect(stack.pop()).toBe(name);
      else stack.push(name);
    }
    expect(stack).toEqual([]);
  });
});

describe('process.no_leftovers', () => {
  it('fails with the pid and command of a process left running, passes with none, is blocked when not observed', () => {
    const left = runChecks({ ...evidence(), leftovers: [{ pid: 4242, command: 'sleep 600' }] });
    expect(failing(left)).toEqual(['process.no_leftovers']);
    expect(left.find((c) => c.id === 'process.no_leftovers')?.evidence).toContain('pid 4242 (sleep 600)');
    expect(statusOf(runChecks({ ...evidence(), leftovers: [] }), 'process.no_leftovers')).toBe('pass');
    expect(statusOf(runChecks({ ...evidence(), leftovers: null }), 'process.no_leftovers')).toBe('blocked');
  });

  it('a run/result for a foreign run id fails results.well_formed with the dropped notification as evidence', () => {
    const r = runChecks({ ...evidence(), strayResults: ['protocol error: plugin acme/x sent a run/result for unknown run not-r1; dropped'] });
    expect(failing(r)).toEqual(['results.well_formed']);
    expect(r.find((c) => c.id === 'results.well_formed')?.evidence).toContain('unknown run not-r1');
  });
});
