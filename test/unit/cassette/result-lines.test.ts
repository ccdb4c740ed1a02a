// Cassettes store delivered items and notices as result-stream lines, and read older bare entries as the same lines.
import { describe, expect, it } from 'vitest';
import { compareRuns, deliveredEntry, observedEntry, storedEntry } from '../../../src/core/cassette/results.js';
import type { TapeRun } from '../../../src/core/cassette/schema.js';

const message = { role: 'assistant' as const, content: 'hi' };

describe('cassette result lines', () => {
  it('stores a delivered item and a notice as their result lines without run id or time', () => {
    expect(deliveredEntry({ type: 'message.completed', run_id: 'r-1', message })).toEqual({ type: 'message.completed', data: { message } });
    expect(observedEntry('r-1', { at: 5, type: 'action.refused', data: { a: 1 }, executed: false })).toEqual({
      type: 'action.refused',
      data: { a: 1 },
      observed: true,
      executed: false,
    });
  });

  it('reads the bare entries of older cassettes as the same lines', () => {
    expect(storedEntry({ type: 'message.completed', message })).toEqual(deliveredEntry({ type: 'message.completed', run_id: 'r', message }));
    expect(storedEntry({ type: 'note', data: { a: 1 } })).toEqual(observedEntry('r', { at: 1, type: 'note', data: { a: 1 } }));
    const old: TapeRun = {
      event_id: 'ev-1',
      event_type: 'message.received',
      runner_id: 'plugin:acme/scripted/default',
      calls: [],
      answers: [],
      results: { status: 'completed', error: null, reply: 'hi', delivered: [{ type: 'message.completed', message }], observed: [] },
    };
    const now = { ...old.results, delivered: [deliveredEntry({ type: 'message.completed', run_id: 'r', message })] };
    expect(compareRuns([old], [now])).toEqual([]);
  });
});
