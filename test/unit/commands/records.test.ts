// Human renderings of store records: local times, durations, the audit and messages of a run at a glance.
import { describe, expect, it } from 'vitest';
import { duration, eventDetail, eventTable, runDetail, runTable, transcriptLines } from '../../../src/commands/shared/records.js';
import { localTime } from '../../../src/commands/shared/table.js';

const t0 = 1_764_687_845; // a fixed instant; expectations go through localTime so any TZ passes
const run = {
  run_id: 'run-1',
  runner_id: 'plugin:acme/echo/default',
  binding_id: 'b1',
  event_id: 'ev-1',
  conversation_id: 'c1',
  status: 'failed' as const,
  error: { code: 'runner.crashed', message: 'plugin acme/echo exited with status 1', retryable: true },
  started_at: t0,
  ended_at: t0 + 2.345,
  api_calls: [
    { at: t0 + 1, action: 'state.get', resource: 'k', decision: 'allowed' as const, code: null, caller_plugin: 'acme/echo', as_run_id: 'run-1' },
    {
      at: t0 + 2,
      action: 'tools.call',
      resource: 'exec',
      decision: 'denied' as const,
      code: 'permission_denied',
      caller_plugin: 'acme/echo',
      as_run_id: 'run-1',
    },
  ],
  observed: [],
  results: [{ type: 'message.completed' as const, run_id: 'run-1', data: { message: { role: 'assistant', content: 'hello there' } } }],
  state_writes: [],
  warnings: [],
  stderr_tail: 'Traceback: boom\n',
};

describe('store records for people', () => {
  it('durations read at a glance, and a run still going says so', () => {
    expect(duration(0, 0.85)).toBe('850ms');
    expect(duration(0, 12.34)).toBe('12.3s');
    expect(duration(0, 245)).toBe('4m 05s');
    expect(duration(0, 7380)).toBe('2h 03m');
    expect(duration(10, null)).toBe('running');
  });

  it('runs: a table with local start time and duration; show lists fields, audit, messages and stderr', () => {
    const lines = runTable([run]).split('\n');
    expect(lines[0]).toMatch(/^RUN +RUNNER +EVENT +STATUS +STARTED +DURATION$/);
    expect(lines[1]).toContain('failed (runner.crashed)');
    expect(lines[1]).toContain(localTime(t0));
    expect(lines[1]).toMatch(/2\.3s$/);
    expect(runTable([])).toBe('no runs');
    const shown = runDetail(run);
    expect(shown).toMatch(new RegExp(`started: +${localTime(t0)}`));
    expect(shown).toMatch(/duration: +2\.3s/);
    expect(shown).toContain('error: plugin acme/echo exited with status 1');
    expect(shown).toMatch(/tools\.call +exec +denied \(permission_denied\)/);
    expect(shown).toContain('messages:\n  hello there');
    expect(shown).toContain('stderr (last lines):\n  Traceback: boom');
    expect(shown).not.toContain(String(t0)); // no epoch seconds for a person to convert
  });

  it('events: a table and a detail block in local time; transcript lines carry the time of day', () => {
    const ev = {
      id: 1,
      seq: 7,
      cursor: 'x',
      event_id: 'ev-1',
      event_type: 'message.received',
      event_time: null,
      source: 'telegram',
      bot_id: 'bot1',
      workspace_id: null,
      conversation_id: 'c1',
      thread_id: null,
      actor_type: 'user',
      actor_id: 'u1',
      actor_name: 'Ada',
      subject_type: null,
      subject_id: null,
      input_summary: 'hi',
      input_json: { text: 'hi' },
      raw_ref: null,
      run_id: 'run-1',
      runner_id: null,
      created_at: t0,
      metadata: {},
    };
    expect(eventTable([ev]).split('\n')[1]).toMatch(new RegExp(`^7 +${localTime(t0)} +ev-1 +message\\.received +c1 +Ada +run-1$`));
    const shown = eventDetail(ev);
    expect(shown).toMatch(/actor: +Ada \(user u1\)/);
    expect(shown).toContain('"text": "hi"');
    const item = {
      transcript_id: 't',
      event_id: 'ev-1',
      conversation_id: 'c1',
      thread_id: null,
      role: 'user',
      item_type: 'message',
      content: 'hi',
      content_json: null,
      artifact_refs: [],
      seq: 3,
      cursor: null,
      created_at: t0,
      metadata: {},
    };
    expect(transcriptLines([item])).toBe(`[3] ${localTime(t0).slice(11)} user: hi`);
    expect(transcriptLines([])).toBe('no items');
  });
});
