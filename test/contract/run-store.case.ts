// Contract suite for RunStore: run records and their append-only audit; every implementation runs it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord, RunStore } from '../../src/core/stores/types.js';
import type { Async } from '../../src/core/stores/async.js';
import { expectLbotError, type OpenStore } from './harness.js';

export function runStart(
  run_id: string,
  started_at = 100,
): Pick<RunRecord, 'run_id' | 'runner_id' | 'binding_id' | 'event_id' | 'conversation_id' | 'started_at'> {
  return { run_id, runner_id: 'plugin:acme/echo/default', binding_id: 'b1', event_id: 'evt-1', conversation_id: 'c1', started_at };
}

export function runStoreContract(name: string, open: OpenStore<{ runs: Async<RunStore> }>): void {
  describe(`RunStore contract (${name})`, () => {
    let s: Awaited<ReturnType<typeof open>>;
    beforeEach(async () => {
      s = await open();
    });
    afterEach(() => s.close());

    it('creates a running record with an empty audit', async () => {
      await s.runs.create(runStart('r1'));
      expect(await s.runs.get('r1')).toEqual({
        ...runStart('r1'),
        status: 'running',
        error: null,
        ended_at: null,
        api_calls: [],
        observed: [],
        results: [],
        state_writes: [],
        warnings: [],
        stderr_tail: null,
      });
      expect(await s.runs.get('nope')).toBeNull();
    });

    it('keeps every audit append, in order, and the final status', async () => {
      await s.runs.create(runStart('r1'));
      await s.runs.addApiCall('r1', {
        at: 1,
        action: 'state.get',
        resource: 'state',
        decision: 'allowed',
        code: null,
        caller_plugin: 'acme/echo',
        as_run_id: 'r1',
      });
      await s.runs.addApiCall('r1', {
        at: 2,
        action: 'models.invoke',
        resource: 'm1',
        decision: 'denied',
        code: 'unauthorized',
        caller_plugin: 'acme/echo',
        as_run_id: 'r1',
      });
      await s.runs.addObserved('r1', { at: 3, type: 'action.requested', data: { action: 'kick' }, executed: false, note: 'logged only' });
      await s.runs.addResult('r1', {
        type: 'message.delta',
        run_id: 'r1',
        data: { chunk: { role: 'assistant', content: 'o', is_final: false, msg_sequence: 0 } },
      });
      await s.runs.addResult('r1', { type: 'message.completed', run_id: 'r1', data: { message: { role: 'assistant', content: 'ok' } } });
      await s.runs.addStateWrite('r1', { scope: 'conversation', key: 'a' });
      await s.runs.addWarning('r1', 'first');
      await s.runs.addWarning('r1', 'second');
      await s.runs.finish('r1', 'failed', { code: 'runner.crashed', message: 'boom', retryable: false, details: { exit: 1 } }, 200, 'last line');
      const r = await s.runs.get('r1');
      expect(r?.status).toBe('failed');
      expect(r?.error).toEqual({ code: 'runner.crashed', message: 'boom', retryable: false, details: { exit: 1 } });
      expect(r?.ended_at).toBe(200);
      expect(r?.stderr_tail).toBe('last line');
      expect(r?.api_calls.map((c) => c.action)).toEqual(['state.get', 'models.invoke']);
      expect(r?.api_calls[1]).toEqual({
        at: 2,
        action: 'models.invoke',
        resource: 'm1',
        decision: 'denied',
        code: 'unauthorized',
        caller_plugin: 'acme/echo',
        as_run_id: 'r1',
      });
      expect(r?.observed).toEqual([{ at: 3, type: 'action.requested', data: { action: 'kick' }, executed: false, note: 'logged only' }]);
      expect(r?.results.map((x) => x.type)).toEqual(['message.delta', 'message.completed']);
      expect(r?.results[1]).toEqual({ type: 'message.completed', run_id: 'r1', data: { message: { role: 'assistant', content: 'ok' } } });
      expect(r?.state_writes).toEqual([{ scope: 'conversation', key: 'a' }]);
      expect(r?.warnings).toEqual(['first', 'second']);
    });

    it('takes thousands of audit appends', async () => {
      await s.runs.create(runStart('r1'));
      for (let i = 0; i < 2000; i++) {
        await s.runs.addApiCall('r1', { at: i, action: 'state.get', resource: null, decision: 'allowed', code: null, caller_plugin: 'p', as_run_id: 'r1' });
      }
      expect((await s.runs.get('r1'))?.api_calls).toHaveLength(2000);
    });

    it('appends a batch of audit entries for several runs in one call, in order', async () => {
      await s.runs.create(runStart('r1'));
      await s.runs.create(runStart('r2'));
      const call = (at: number, run: string) => ({
        at,
        action: 'state.get',
        resource: null,
        decision: 'allowed' as const,
        code: null,
        caller_plugin: 'p',
        as_run_id: run,
      });
      await s.runs.addApiCalls([
        { run_id: 'r1', call: call(1, 'r1') },
        { run_id: 'r2', call: call(2, 'r2') },
        { run_id: 'r1', call: call(3, 'r1') },
      ]);
      expect((await s.runs.get('r1'))?.api_calls.map((c) => c.at)).toEqual([1, 3]);
      expect((await s.runs.get('r2'))?.api_calls.map((c) => c.at)).toEqual([2]);
      await expectLbotError(() => s.runs.addApiCalls([{ run_id: 'ghost', call: call(4, 'ghost') }]), 'not_found');
      expect((await s.runs.get('r1'))?.api_calls).toHaveLength(2);
    });

    it('refuses a duplicate run id and audit or finish for an unknown run', async () => {
      await s.runs.create(runStart('r1'));
      await expectLbotError(() => s.runs.create(runStart('r1')), 'invalid_argument');
      await expectLbotError(() => s.runs.addWarning('ghost', 'x'), 'not_found');
      await expectLbotError(() => s.runs.finish('ghost', 'completed', null, 1, null), 'not_found');
    });

    it('lists oldest first; a limit keeps the newest runs', async () => {
      for (const id of ['r1', 'r2', 'r3']) await s.runs.create(runStart(id));
      await s.runs.addWarning('r2', 'w');
      expect((await s.runs.list()).map((r) => r.run_id)).toEqual(['r1', 'r2', 'r3']);
      expect((await s.runs.list({ limit: 2 })).map((r) => r.run_id)).toEqual(['r2', 'r3']);
      expect((await s.runs.list({ limit: 2 }))[0]?.warnings).toEqual(['w']);
    });

    it('marks only runs still running as interrupted', async () => {
      await s.runs.create(runStart('r1'));
      await s.runs.create(runStart('r2'));
      await s.runs.finish('r2', 'completed', null, 5, null);
      await s.runs.markInterrupted(['r1', 'r2', 'ghost']);
      expect((await s.runs.get('r1'))?.status).toBe('interrupted');
      expect((await s.runs.get('r1'))?.ended_at).not.toBeNull();
      // a host-side error, retryable, so a client can tell it from a runner failure
      expect((await s.runs.get('r1'))?.error).toMatchObject({ code: 'host.interrupted', retryable: true });
      expect((await s.runs.get('r2'))?.status).toBe('completed');
      expect((await s.runs.get('r2'))?.error).toBeNull();
      await s.runs.markInterrupted([]);
    });

    it('keeps the audit of calls no run can be named for, per plugin, oldest first', async () => {
      const call = (at: number, caller_plugin: string) => ({
        at,
        action: 'state.get',
        resource: null,
        decision: 'denied' as const,
        code: 'unauthorized',
        caller_plugin,
        as_run_id: 'ghost',
      });
      await s.runs.addUnattributedCall(call(1, 'acme/a'));
      await s.runs.addUnattributedCall(call(2, 'acme/b'));
      await s.runs.addUnattributedCall(call(3, 'acme/a'));
      expect((await s.runs.unattributedCalls()).map((c) => c.at)).toEqual([1, 2, 3]);
      expect(await s.runs.unattributedCalls({ caller_plugin: 'acme/a' })).toEqual([call(1, 'acme/a'), call(3, 'acme/a')]);
      expect((await s.runs.unattributedCalls({ limit: 1 })).map((c) => c.at)).toEqual([3]);
      expect(await s.runs.get('ghost')).toBeNull();
    });
  });
}
