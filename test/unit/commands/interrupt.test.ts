// The command interrupt: listeners only once a command asks, the first SIGINT/SIGTERM aborts and
// removes them (so a second signal gets Node's default), dispose() leaves nothing behind.
import { describe, expect, it } from 'vitest';
import { createInterrupt, whenAborted } from '../../../src/commands/shared/interrupt.js';

const counts = () => [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];

describe('createInterrupt', () => {
  it('installs nothing until the signal is read, and dispose() removes what it installed', () => {
    const before = counts();
    const interrupt = createInterrupt();
    expect(counts()).toEqual(before);
    void interrupt.signal;
    void interrupt.signal;
    expect(counts()).toEqual(before.map((n) => n + 1));
    interrupt.dispose();
    expect(counts()).toEqual(before);
  });

  it.each(['SIGINT', 'SIGTERM'] as const)('aborts on the first %s with its name and lets the next one through', async (name) => {
    const before = counts();
    const interrupt = createInterrupt();
    const signal = interrupt.signal;
    const done = whenAborted(signal);
    process.emit(name, name);
    await done;
    expect(signal.reason).toBe(name);
    expect(counts()).toEqual(before);
    // Reading it again after the abort does not install anything.
    expect(interrupt.signal.aborted).toBe(true);
    expect(counts()).toEqual(before);
  });
});
