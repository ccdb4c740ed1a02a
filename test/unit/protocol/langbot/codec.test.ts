// The LangBot wire codec: chunking by UTF-8 byte offsets under the plugin's 64 KiB line limit, the
// decoder's strict reassembly, skipped print lines, and the caps an attacker would probe.
import { describe, expect, it } from 'vitest';
import { LangbotDecoder, encodeLangbotMessage } from '../../../../src/core/protocol/langbot/codec.js';
import { LANGBOT_PLUGIN_LINE_LIMIT } from '../../../../src/core/protocol/langbot/frames.js';

const bytes = (s: string) => Buffer.from(s, 'utf8');

function roundTrip(message: Record<string, unknown>, feed: (lines: string[]) => Buffer[] = (l) => [bytes(l.join(''))]) {
  const lines = encodeLangbotMessage(message);
  const decoder = new LangbotDecoder();
  const frames = feed(lines).flatMap((b) => {
    const out = decoder.push(b);
    expect(out.violation).toBeNull();
    return out.frames;
  });
  return { lines, frames };
}

describe('encodeLangbotMessage', () => {
  it('sends a small message as one line', () => {
    expect(encodeLangbotMessage({ seq_id: 1, action: 'x', data: {} })).toEqual(['{"seq_id":1,"action":"x","data":{}}\n']);
  });

  it.each([
    ['multi-byte text', 'é大🙂'.repeat(20000)],
    ['control characters (6x when escaped)', '\u0001'.repeat(40000)],
    ['quotes and backslashes', '"\\'.repeat(30000)],
  ])('chunks %s under 64 KiB per line with byte offsets that add up', (_name, text) => {
    const message = { seq_id: 7, action: 'call_tool', data: { text } };
    const { lines, frames } = roundTrip(message);
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(LANGBOT_PLUGIN_LINE_LIMIT);
    const data = lines.slice(1, -1).map((l) => JSON.parse(l) as { data: string; offset: number });
    let offset = 0;
    for (const d of data) {
      expect(d.offset).toBe(offset);
      expect(Buffer.byteLength(d.data)).toBeLessThanOrEqual(16 * 1024);
      offset += Buffer.byteLength(d.data);
    }
    expect(JSON.parse(lines[0] ?? '')).toEqual({ type: 'chunk_start', total_size: Buffer.byteLength(JSON.stringify(message)) });
    expect(frames).toEqual([{ kind: 'request', request: message }]);
  });

  it('reassembles lines fed in 5-byte reads (multi-byte characters split across reads)', () => {
    const message = { seq_id: 3, code: 0, message: 'success', data: { text: '大🙂'.repeat(3000) }, chunk_status: 'end' };
    const pieces = (all: Buffer) => Array.from({ length: Math.ceil(all.length / 5) }, (_, i) => all.subarray(i * 5, i * 5 + 5));
    const { frames } = roundTrip(message, (lines) => pieces(bytes(lines.join(''))));
    expect(frames).toEqual([{ kind: 'response', response: message }]);
  });
});

describe('LangbotDecoder', () => {
  it('skips print lines and JSON that is neither request nor response', () => {
    const out = new LangbotDecoder().push(
      bytes('Running plugin in current directory\n{"hello":1}\n[1,2]\n{"seq_id":1,"action":"register_plugin","data":{}}\n'),
    );
    expect(out.violation).toBeNull();
    expect(out.skipped).toEqual(['Running plugin in current directory', '{"hello":1}', '[1,2]']);
    expect(out.frames).toEqual([{ kind: 'request', request: { seq_id: 1, action: 'register_plugin', data: {} } }]);
  });

  it('refuses a line over the cap before buffering it whole', () => {
    const d = new LangbotDecoder({ lineBytes: 1024 });
    expect(d.push(bytes('x'.repeat(1000))).violation).toBeNull();
    expect(d.push(bytes('x'.repeat(100))).violation).toMatch(/longer than 1024 bytes/);
    expect(d.push(bytes('{"seq_id":1,"action":"a"}\n')).frames).toEqual([]);
  });

  it.each([
    ['a wrong byte offset', ['{"type":"chunk_start","total_size":4}', '{"type":"chunk_data","data":"é","offset":1}'], /offset 1, expected 0/],
    ['char counts instead of byte counts', ['{"type":"chunk_start","total_size":1}', '{"type":"chunk_data","data":"é","offset":0}'], /past total_size/],
    ['a short message', ['{"type":"chunk_start","total_size":9}', '{"type":"chunk_data","data":"{}","offset":0}', '{"type":"chunk_end"}'], /after 2 of 9/],
    ['data without start', ['{"type":"chunk_data","data":"x","offset":0}'], /without chunk_start/],
    ['a nested start', ['{"type":"chunk_start","total_size":2}', '{"type":"chunk_start","total_size":2}'], /another chunked message/],
    ['an oversized total', ['{"type":"chunk_start","total_size":999999999}'], /exceeds/],
    [
      'a chunked non-frame',
      ['{"type":"chunk_start","total_size":2}', '{"type":"chunk_data","data":"{}","offset":0}', '{"type":"chunk_end"}'],
      /neither a request/,
    ],
    ['a malformed frame', ['{"seq_id":"one","code":0}'], /malformed response/],
  ])('breaks the channel on %s', (_name, lines, why) => {
    const out = new LangbotDecoder().push(bytes(lines.map((l) => `${l}\n`).join('')));
    expect(out.violation).toMatch(why);
  });

  it('caps the fragments of one message', () => {
    const d = new LangbotDecoder({ fragments: 3 });
    const lines = ['{"type":"chunk_start","total_size":4}', ...['a', 'b', 'c', 'd'].map((c, i) => JSON.stringify({ type: 'chunk_data', data: c, offset: i }))];
    expect(d.push(bytes(lines.map((l) => `${l}\n`).join(''))).violation).toMatch(/more than 3 fragments/);
  });
});
