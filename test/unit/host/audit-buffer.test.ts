// The audit's group commit (core/host/audit-buffer.ts): allowed rows wait up to the window and share one
// commit; a refusal commits everything pending, in order, before it settles; flush writes what is left; a
// failed write rejects every entry of its batch and names their runs.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AUDIT_WINDOW_MS, AuditBuffer } from '../../../src/core/host/audit-buffer.js';
import type { AsyncRunStore } from '../../../src/core/stores/async.js';
import type { ApiCallAudit } from '../../../src/core/stores/types.js';

const entry = (action: string, decision: 'allowed' | 'denied' = 'allowed'): ApiCallAudit => ({
  action,
  resource: null,
  decision,
  code: decision === 'denied' ? 'unauthorized' : null,
  at: 1,
  caller_plugin: 'acme/echo',
  as_run_id: 'r1',
});

function store(fail = false) {
  const batches: string[][] = [];
  const s = {
    addApiCalls: async (rows: { run_id: string; call: ApiCallAudit }[]) => {
      if (fail) throw new Error('disk full');
      batches.push(rows.map((r) => `${r.run_id}:${r.call.action}`));
    },
  };
  return { batches, store: s as unknown as AsyncRunStore };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('AuditBuffer', () => {
  it('allowed rows added one after another within the window share one commit, made when the window ends', async () => {
    vi.useFakeTimers();
    const { batches, store: s } = store();
    const buffer = new AuditBuffer(s, () => undefined);
    const settled: string[] = [];
    for (const a of ['state.get', 'state.set', 'models.invoke']) void buffer.add('r1', entry(a)).then(() => settled.push(a));
    await vi.advanceTimersByTimeAsync(AUDIT_WINDOW_MS - 1);
    expect(batches).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(batches).toEqual([['r1:state.get', 'r1:state.set', 'r1:models.invoke']]);
    expect(settled).toEqual(['state.get', 'state.set', 'models.invoke']);
  });

  it('a refusal commits the rows pending before it and its own, in order, before it settles', async () => {
    vi.useFakeTimers();
    const { batches, store: s } = store();
    const buffer = new AuditBuffer(s, () => undefined);
    void buffer.add('r1', entry('state.get'));
    await buffer.add('r2', entry('history.page', 'denied'), true);
    expect(batches).toEqual([['r1:state.get', 'r2:history.page']]);
    // Nothing is left for the window's timer.
    await vi.advanceTimersByTimeAsync(AUDIT_WINDOW_MS);
    expect(batches).toHaveLength(1);
  });

  it('flush writes what is pending at once; a full batch does not wait for the window', async () => {
    vi.useFakeTimers();
    const { batches, store: s } = store();
    const buffer = new AuditBuffer(s, () => undefined, 2);
    void buffer.add('r1', entry('a'));
    void buffer.add('r1', entry('b'));
    await Promise.resolve();
    expect(batches).toEqual([['r1:a', 'r1:b']]);
    void buffer.add('r1', entry('c'));
    await buffer.flush();
    expect(batches).toEqual([['r1:a', 'r1:b'], ['r1:c']]);
  });

  it('a failed write rejects every entry of its batch and reports their runs once', async () => {
    const { store: s } = store(true);
    const reported: string[][] = [];
    const buffer = new AuditBuffer(s, (_err, runs) => reported.push([...runs]));
    const a = buffer.add('r1', entry('state.get'));
    const b = buffer.add('r2', entry('state.set'));
    await expect(a).rejects.toThrow('disk full');
    await expect(b).rejects.toThrow('disk full');
    expect(reported).toEqual([['r1', 'r2']]);
  });
});
