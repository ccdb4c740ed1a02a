// The stop escalation and exit statuses shared by plugin, MCP and box processes.
import { constants } from 'node:os';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exitStatus, stopEscalating } from '../../../src/runtime/process/stop.js';

afterEach(() => {
  vi.useRealTimers();
});

function child(exitOn: 'eof' | 'SIGTERM' | 'SIGKILL' | 'never') {
  const steps: string[] = [];
  let exit!: () => void;
  const exited = new Promise<void>((resolve) => (exit = resolve));
  return {
    steps,
    exited,
    endInput: () => {
      steps.push('eof');
      if (exitOn === 'eof') exit();
    },
    signal: (sig: 'SIGTERM' | 'SIGKILL') => {
      steps.push(sig);
      if (exitOn === sig) exit();
    },
  };
}

describe('stopEscalating', () => {
  it.each([
    ['eof', ['eof']],
    ['SIGTERM', ['eof', 'SIGTERM']],
    ['SIGKILL', ['eof', 'SIGTERM', 'SIGKILL']],
  ] as const)('stops at the step the child exits on (%s)', async (exitOn, expected) => {
    vi.useFakeTimers();
    const c = child(exitOn);
    const done = stopEscalating({ ...c, graceMs: 1000 });
    await vi.advanceTimersByTimeAsync(2000);
    await done;
    expect(c.steps).toEqual(expected);
  });

  it('waits each grace period before escalating, and gives up after afterKillMs', async () => {
    vi.useFakeTimers();
    const c = child('never');
    let finished = false;
    void stopEscalating({ ...c, graceMs: 1000, afterKillMs: 500 }).then(() => (finished = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(c.steps).toEqual(['eof']);
    await vi.advanceTimersByTimeAsync(10);
    expect(c.steps).toEqual(['eof', 'SIGTERM']);
    await vi.advanceTimersByTimeAsync(1000);
    expect(c.steps).toEqual(['eof', 'SIGTERM', 'SIGKILL']);
    expect(finished).toBe(false);
    await vi.advanceTimersByTimeAsync(510);
    expect(finished).toBe(true);
  });

  it('signals SIGTERM right after end of input when inputGraceMs is 0 (box managed processes)', async () => {
    vi.useFakeTimers();
    const c = child('SIGTERM');
    const done = stopEscalating({ ...c, inputGraceMs: 0, graceMs: 5000 });
    await vi.advanceTimersByTimeAsync(1);
    await done;
    expect(c.steps).toEqual(['eof', 'SIGTERM']);
  });

  it('returns without a signal when the child has already exited', async () => {
    const c = child('eof');
    c.endInput();
    c.steps.length = 0;
    await stopEscalating({ ...c, inputGraceMs: 0, graceMs: 5000 });
    expect(c.steps).toEqual(['eof']);
  });
});

describe('exitStatus', () => {
  it('is the code, else 128 + the platform signal number', () => {
    expect(exitStatus(3, null)).toBe(3);
    expect(exitStatus(null, 'SIGTERM')).toBe(128 + constants.signals.SIGTERM);
    expect(exitStatus(null, 'SIGINT')).toBe(128 + constants.signals.SIGINT);
    expect(exitStatus(null, null)).toBeNull();
  });
});
