// Cassette logic without processes: canonical values, line diffs, answer matching and result comparison.
import { describe, expect, it } from 'vitest';
import { lineDiff } from '../../../src/core/cassette/diff.js';
import { AnswerDeck } from '../../../src/core/cassette/match.js';
import { stableJson, stableValue } from '../../../src/core/cassette/normalize.js';
import { coalesceDeltas, compareRuns } from '../../../src/core/cassette/results.js';
import { CassetteSchema, type TapeAnswer, type TapeRun } from '../../../src/core/cassette/schema.js';

const answer = (request: unknown, result: unknown, kind: TapeAnswer['kind'] = 'models.invoke'): TapeAnswer => ({
  kind,
  request,
  outcome: { ok: true, result },
});

const tapeRun = (reply: string): TapeRun => ({
  event_id: 'ev-1',
  event_type: 'message.received',
  runner_id: 'plugin:acme/scripted/default',
  calls: [],
  answers: [],
  results: {
    status: 'completed',
    error: null,
    reply,
    delivered: [{ type: 'message.completed', message: { role: 'assistant', content: reply } }],
    observed: [],
  },
});

describe('stable values', () => {
  it('drops per-run keys, masks generated ids and sorts keys', () => {
    const v = stableValue({ b: 1, run_id: 'x', a: { at: 5, id: '3f1c2b7e-9d7a-4c3b-8f59-1d2e3a4b5c6d', note: 'run 3f1c2b7e-9d7a-4c3b-8f59-1d2e3a4b5c6d ok' } });
    expect(JSON.stringify(v)).toBe('{"a":{"id":"<id>","note":"run <id> ok"},"b":1}');
    expect(stableJson({ x: 1, y: [2, { z: 3, timestamp: 9 }] })).toBe(stableJson({ y: [2, { z: 3 }], x: 1 }));
  });
});

describe('lineDiff', () => {
  it('is empty for equal texts and marks removed and added lines with context', () => {
    expect(lineDiff('a\nb', 'a\nb')).toEqual([]);
    const d = lineDiff('one\ntwo\nthree', 'one\nTWO\nthree');
    expect(d).toEqual(['--- cassette', '+++ now', '  one', '- two', '+ TWO', '  three']);
  });

  it('elides long unchanged stretches', () => {
    const before = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const after = before.replace('line 15', 'line fifteen');
    const d = lineDiff(before, after, { context: 1 });
    expect(d).toContain('- line 15');
    expect(d).toContain('+ line fifteen');
    expect(d.filter((l) => l === '  …')).toHaveLength(2);
    expect(d.length).toBeLessThan(12);
  });
});

describe('AnswerDeck', () => {
  it('serves equal requests in order, each answer once, ignoring key order and run ids', () => {
    const deck = new AnswerDeck([
      answer({ model_id: 'm', messages: [{ role: 'user', content: 'a' }] }, 'first'),
      answer({ model_id: 'm', messages: [{ role: 'user', content: 'a' }] }, 'second'),
    ]);
    const one = deck.take('models.invoke', { messages: [{ content: 'a', role: 'user' }], model_id: 'm', run_id: 'r-1' });
    const two = deck.take('models.invoke', { model_id: 'm', messages: [{ role: 'user', content: 'a' }] });
    expect(one.ok && one.answer.outcome).toEqual({ ok: true, result: 'first' });
    expect(two.ok && two.answer.outcome).toEqual({ ok: true, result: 'second' });
    const three = deck.take('models.invoke', { model_id: 'm', messages: [{ role: 'user', content: 'a' }] });
    expect(three.ok).toBe(false);
    expect(!three.ok && three.reason).toContain('all were used');
    expect(deck.unused()).toEqual([]);
  });

  it('explains a request the cassette does not hold with a diff against the next recorded one', () => {
    const deck = new AnswerDeck([answer({ model_id: 'm', messages: [{ role: 'user', content: 'ping' }] }, 'x')]);
    const miss = deck.take('models.invoke', { model_id: 'm', messages: [{ role: 'user', content: 'pong' }] });
    expect(miss.ok).toBe(false);
    if (miss.ok) return;
    expect(miss.reason).toContain('no models.invoke call with this request');
    expect(miss.diff).toContain('-       "content": "ping",');
    expect(miss.diff).toContain('+       "content": "pong",');
    expect(deck.unused()).toHaveLength(1);
  });

  it('keeps kinds apart and hands out the tool list without matching', () => {
    const deck = new AnswerDeck([answer(null, [{ name: 't' }], 'tools.list'), answer({ name: 't', parameters: {} }, 42, 'tools.call')]);
    expect(deck.take('models.invoke', { name: 't', parameters: {} }).ok).toBe(false);
    expect(deck.first('tools.list')?.outcome).toEqual({ ok: true, result: [{ name: 't' }] });
    expect(deck.take('tools.call', { name: 't', parameters: {} }).ok).toBe(true);
  });
});

describe('compareRuns', () => {
  it('reports nothing for the same results and a readable diff for a changed reply', () => {
    expect(compareRuns([tapeRun('done')], [tapeRun('done').results])).toEqual([]);
    const diff = compareRuns([tapeRun('done')], [tapeRun('changed').results]);
    expect(diff[0]).toBe('run 1 (event ev-1): results changed');
    expect(diff).toContain('  -   "reply": "done",');
    expect(diff).toContain('  +   "reply": "changed",');
  });

  it('compares a run of cumulative deltas by its last one, per message', () => {
    const d = (content: string, msg_sequence = 0) => ({ type: 'message.delta', data: { chunk: { role: 'assistant', content, msg_sequence } } });
    const said = { type: 'message.completed', data: { message: { role: 'assistant', content: 'Hello' } } };
    expect(coalesceDeltas([d('He'), d('Hell'), d('Hello'), said, d('A', 1), d('B', 2)])).toEqual([d('Hello'), said, d('A', 1), d('B', 2)]);
    const recorded = tapeRun('Hello');
    recorded.results.delivered = [d('He'), d('Hell'), d('Hello'), said];
    const replayed = { ...tapeRun('Hello').results, delivered: [d('Hello'), said] };
    expect(compareRuns([recorded], [replayed])).toEqual([]);
    expect(compareRuns([recorded], [{ ...replayed, delivered: [d('Help'), said] }])[0]).toBe('run 1 (event ev-1): results changed');
  });

  it('names runs missing on either side', () => {
    expect(compareRuns([tapeRun('a'), tapeRun('b')], [tapeRun('a').results])).toEqual([
      'run 2 (event ev-1): recorded, but it did not run this time (an earlier run failed or the event file changed)',
    ]);
    expect(compareRuns([], [tapeRun('a').results])).toEqual(['run 1: not in the cassette (it holds 0 run(s))']);
  });
});

describe('CassetteSchema', () => {
  it('accepts a cassette and refuses another version', () => {
    const cassette = {
      lbot_cassette: 1,
      recorded_at: 'now',
      lbot_version: '0.1.0',
      models: [{ id: 'm-fake', provider: 'fake', model_type: 'llm' }],
      runs: [tapeRun('x')],
    };
    expect(CassetteSchema.safeParse(cassette).success).toBe(true);
    expect(CassetteSchema.safeParse({ ...cassette, lbot_cassette: 2 }).success).toBe(false);
  });
});
