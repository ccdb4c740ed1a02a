// `--event` input parsing: one envelope or an array, with precise errors (AC-190, AC-191, AC-193, AC-203).
import { describe, expect, it } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import { parseEventInput } from '../../../src/core/host/event-input.js';

const LIMIT = 1024 * 1024;
const event = (over: Record<string, unknown> = {}) => ({
  event_id: 'ev-1',
  event_type: 'message.received',
  source: 'api',
  conversation_id: 'c1',
  input: { text: 'ping', contents: [{ type: 'text', text: 'ping' }] },
  delivery: { surface: 'cli', supports_streaming: true },
  ...over,
});

function failure(text: string): LbotError {
  try {
    parseEventInput(text, 'e.json', LIMIT, 'generic');
  } catch (err) {
    if (err instanceof LbotError) return err;
    throw err;
  }
  throw new Error('expected an LbotError');
}

describe('parseEventInput', () => {
  it('reads one envelope or an array of them, in order, with defaults filled', () => {
    const [one] = parseEventInput(JSON.stringify(event()), 'e.json', LIMIT, 'generic');
    expect(one?.envelope).toMatchObject({ event_id: 'ev-1', thread_id: null, actor: null, data: {}, raw_ref: null, event_time: null });
    const many = parseEventInput(JSON.stringify([event({ event_id: 'a' }), event({ event_id: 'b' })]), 'e.json', LIMIT, 'generic');
    expect(many.map((e) => e.envelope.event_id)).toEqual(['a', 'b']);
  });

  it('reports malformed JSON with line and column (AC-190)', () => {
    const err = failure('{\n  "event_id": "ev-1",\n}\n');
    expect(err.code).toBe('event.parse_error');
    expect(err.message).toMatch(/^e\.json:3:1: invalid JSON/);
    expect(err.details).toMatchObject({ line: 3, column: 1 });
  });

  it('names the field of a schema-invalid envelope, and the element of an array (AC-191)', () => {
    const missing = event();
    delete (missing as Record<string, unknown>).source;
    expect(failure(JSON.stringify(missing)).details).toMatchObject({ path: ['source'] });
    expect(failure(JSON.stringify(event({ event_time: 'yesterday' }))).details).toMatchObject({ path: ['event_time'] });
    expect(failure(JSON.stringify(event({ input: { text: 'x', contents: 'x' } }))).details).toMatchObject({ path: ['input', 'contents'] });
    const inArray = failure(JSON.stringify([event(), event({ event_id: '' })]));
    expect(inArray.message).toMatch(/^e\.json\[1\]: event_id/);
    expect(inArray.details).toMatchObject({ index: 1 });
  });

  it('refuses empty files, empty arrays and non-objects', () => {
    expect(failure('   ').code).toBe('event.parse_error');
    expect(failure('[]').code).toBe('event.invalid');
    expect(failure('"text"').code).toBe('event.invalid');
    expect(failure('[1]').code).toBe('event.invalid');
  });

  it('bounds inline data with a hint towards raw_ref and attachments (AC-193)', () => {
    const err = failure(JSON.stringify(event({ data: { blob: 'd'.repeat(LIMIT) } })));
    expect(err.code).toBe('event.invalid');
    expect(err.details).toMatchObject({ path: ['data'], limit_bytes: LIMIT });
    expect(err.hint).toMatch(/raw_ref|attachments/);
  });

  it('never overflows the stack on deep nesting, and lets the last duplicate key win (AC-203)', () => {
    const deep = JSON.stringify(event()).replace(/}$/, `,"data":{"d":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`);
    let outcome: string;
    try {
      parseEventInput(deep, 'e.json', LIMIT, 'generic');
      outcome = 'parsed';
    } catch (err) {
      outcome = err instanceof LbotError ? err.code : `crash: ${String(err)}`;
    }
    expect(['parsed', 'event.invalid']).toContain(outcome);
    const dup = JSON.stringify(event()).replace('"event_id":"ev-1"', '"event_id":"first","event_id":"last"');
    expect(parseEventInput(dup, 'e.json', LIMIT, 'generic')[0]?.envelope.event_id).toBe('last');
  });
});
