// Line framing of the plugin channel: splitting, the 8 MiB cap enforced before buffering, excerpts and
// JSON-RPC decoding (AC-198, AC-199). The writer's backpressure is tested in test/unit/protocol/lines.test.ts.
import { describe, expect, it } from 'vitest';
import { LineSplitter as Splitter, MAX_LINE_BYTES } from '../../../src/core/protocol/index.js';
import { createFrameReader, decodeLine, overflowViolation, type FrameViolation } from '../../../src/runtime/plugins/framing.js';
import { StderrTail } from '../../../src/runtime/plugins/stderr-tail.js';

/** The shared splitter as the plugin channel sees it: each push's lines, and the violation of an oversized line. */
class LineSplitter {
  #out: { lines: Buffer[]; violation: FrameViolation | null } = { lines: [], violation: null };
  readonly #s: Splitter;
  constructor(maxLineBytes?: number) {
    this.#s = new Splitter({
      maxLineBytes,
      onLine: (line) => this.#out.lines.push(line),
      onOverflow: (head) => (this.#out.violation = overflowViolation(this.#s.maxLineBytes, head)),
    });
  }
  push(chunk: Buffer): { lines: Buffer[]; violation: FrameViolation | null } {
    this.#out = { lines: [], violation: null };
    this.#s.push(chunk);
    return this.#out;
  }
  get pendingBytes(): number {
    return this.#s.pendingBytes;
  }
}

describe('LineSplitter', () => {
  it('splits lines across chunk boundaries and keeps the unfinished tail', () => {
    const s = new LineSplitter();
    expect(s.push(Buffer.from('{"a":1}\n{"b"')).lines.map(String)).toEqual(['{"a":1}']);
    expect(s.pendingBytes).toBe(4);
    expect(s.push(Buffer.from(':2}\n\n{"c":3}\n')).lines.map(String)).toEqual(['{"b":2}', '', '{"c":3}']);
    expect(s.pendingBytes).toBe(0);
  });

  it('refuses a line over the cap before buffering it, quoting its first 80 bytes', () => {
    const s = new LineSplitter(1000);
    expect(s.push(Buffer.alloc(600, 0x61)).violation).toBeNull();
    const { violation } = s.push(Buffer.alloc(600, 0x62));
    expect(violation?.reason).toContain('1000-byte limit');
    expect(violation?.excerpt).toBe('a'.repeat(80));
    expect(s.pendingBytes).toBe(0);
    expect(s.push(Buffer.from('later\n'))).toEqual({ lines: [], violation: null });
  });

  it('never holds more than the cap for a 64 MiB line without a newline (AC-199)', () => {
    const s = new LineSplitter();
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let maxPending = 0;
    let violated = false;
    for (let sent = 0; sent < 64 * 1024 * 1024 && !violated; sent += chunk.length) {
      const { violation } = s.push(chunk);
      maxPending = Math.max(maxPending, s.pendingBytes);
      violated = violation !== null;
    }
    expect(violated).toBe(true);
    expect(maxPending).toBeLessThanOrEqual(MAX_LINE_BYTES);
  });

  it('accepts a line of exactly the cap', () => {
    const s = new LineSplitter(10);
    expect(s.push(Buffer.from('0123456789\n'))).toEqual({ lines: [Buffer.from('0123456789')], violation: null });
  });
});

describe('decodeLine', () => {
  it('parses requests, notifications and responses', () => {
    expect(decodeLine(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"state.get","params":{"run_id":"r"}}'))).toMatchObject({
      kind: 'message',
      message: { id: 1, method: 'state.get' },
    });
    expect(decodeLine(Buffer.from('{"jsonrpc":"2.0","method":"run/result","params":{}}\r'))).toMatchObject({
      kind: 'message',
      message: { method: 'run/result' },
    });
    expect(decodeLine(Buffer.from('{"jsonrpc":"2.0","id":3,"result":{"status":"completed"}}'))).toMatchObject({ kind: 'message', message: { id: 3 } });
    expect(decodeLine(Buffer.from('   '))).toBeNull();
  });

  it('turns non-JSON and non-JSON-RPC lines into violations quoting the line (AC-198)', () => {
    expect(decodeLine(Buffer.from('hello world'))).toEqual({
      kind: 'violation',
      violation: { reason: 'the plugin wrote a line that is not JSON', excerpt: 'hello world' },
    });
    expect(decodeLine(Buffer.from('{"id":1,"method":"x"}'))).toMatchObject({
      kind: 'violation',
      violation: { reason: expect.stringContaining('not a JSON-RPC 2.0 message') },
    });
    expect(decodeLine(Buffer.from('[1,2]'))).toMatchObject({ kind: 'violation' });
  });

  it('refuses a line that is not UTF-8, quoting it escaped with \\xNN and no replacement characters', () => {
    // Valid JSON once decoded with replacement, so only the UTF-8 check stops it.
    const line = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","method":"x","params":{"s":"a'), Buffer.from([0xff, 0xc3, 0x28]), Buffer.from('é\\"\\n"}}')]);
    const frame = decodeLine(line);
    expect(frame).toMatchObject({ kind: 'violation', violation: { reason: 'the plugin wrote a line that is not valid UTF-8' } });
    const excerpt = frame?.kind === 'violation' ? frame.violation.excerpt : '';
    expect(excerpt).not.toContain('\uFFFD');
    expect(excerpt).toBe('{\\"jsonrpc\\":\\"2.0\\",\\"method\\":\\"x\\",\\"params\\":{\\"s\\":\\"a\\xff\\xc3(é\\\\\\"\\\\n\\"}}');
  });

  it('bounds an escaped excerpt to 200 characters', () => {
    const frame = decodeLine(Buffer.alloc(500, 0xfe));
    const excerpt = frame?.kind === 'violation' ? frame.violation.excerpt : '';
    expect(excerpt.length).toBeLessThanOrEqual(200);
    expect(excerpt).toMatch(/^(\\xfe)+$/);
  });
});

describe('createFrameReader', () => {
  it('hands on messages and stops at the first oversized line', () => {
    const frames: string[] = [];
    const reader = createFrameReader((f) => frames.push(f.kind === 'message' ? 'message' : f.violation.reason), 100);
    reader.push(Buffer.from('{"jsonrpc":"2.0","method":"run/result","params":{}}\r\n\n'));
    reader.push(Buffer.alloc(200, 0x61));
    reader.push(Buffer.from('{"jsonrpc":"2.0","method":"run/result","params":{}}\n'));
    expect(frames).toEqual(['message', 'a line exceeded the 100-byte limit of the plugin protocol']);
  });
});

describe('StderrTail', () => {
  it('keeps the last 50 lines and an unfinished last line', () => {
    const seen: string[] = [];
    const t = new StderrTail((l) => seen.push(l));
    for (let i = 0; i < 60; i++) t.push(`line ${i}\n`);
    t.push('partial');
    const lines = t.text().split('\n');
    expect(lines[0]).toBe('line 10');
    expect(lines.at(-1)).toBe('partial');
    expect(seen).toHaveLength(60);
    t.flush();
    expect(seen.at(-1)).toBe('partial');
  });

  it('stays within about 8 KiB', () => {
    const t = new StderrTail();
    for (let i = 0; i < 40; i++) t.push(`${'y'.repeat(1000)}\n`);
    expect(Buffer.byteLength(t.text())).toBeLessThanOrEqual(8 * 1024);
  });

  it('keeps bytes that are not UTF-8 as \\xNN and joins a character split across chunks', () => {
    const seen: string[] = [];
    const t = new StderrTail((l) => seen.push(l));
    const euro = Buffer.from('€');
    t.push(Buffer.concat([Buffer.from('bad '), Buffer.from([0xff, 0xc3, 0x28]), Buffer.from(' ok '), euro.subarray(0, 2)]));
    t.push(Buffer.concat([euro.subarray(2), Buffer.from('\nend '), Buffer.from([0xe2, 0x82])]));
    t.flush();
    expect(seen).toEqual(['bad \\xff\\xc3( ok €', 'end \\xe2\\x82']);
    expect(t.text()).not.toContain('\uFFFD');
  });
});
