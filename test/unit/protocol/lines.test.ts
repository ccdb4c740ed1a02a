// The one line splitter and writer (core/protocol/lines.ts): every channel's cap, CRLF, a clean
// restart, the unfinished last line at end of input, and backpressure on writes.
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LineSplitter, LineWriter, OVERFLOW_HEAD_BYTES } from '../../../src/core/protocol/index.js';
import { LineTooLongError } from '../../../src/runtime/mcp/errors.js';

/** The splitter as an MCP transport uses it: lines as text, an overflow as LineTooLongError, then a clean start. */
function textLines(maxLineBytes: number) {
  let out: string[] = [];
  let over = false;
  const s = new LineSplitter({ maxLineBytes, onLine: (l) => out.push(l.toString('utf8')), onOverflow: () => (over = true) });
  return {
    push(chunk: Buffer): string[] {
      out = [];
      over = false;
      s.push(chunk);
      if (over) {
        s.reset();
        throw new LineTooLongError(maxLineBytes);
      }
      return out;
    },
  };
}

describe('line framing with a cap', () => {
  it('splits lines across chunks and strips CR', () => {
    const b = textLines(64);
    expect(b.push(Buffer.from('{"a":1}\r\n{"b"'))).toEqual(['{"a":1}']);
    expect(b.push(Buffer.from(':2}\n\n'))).toEqual(['{"b":2}', '']);
  });

  it('refuses a line over the cap before buffering it, then starts clean', () => {
    const b = textLines(16);
    expect(() => b.push(Buffer.alloc(10, 0x61))).not.toThrow();
    expect(() => b.push(Buffer.alloc(10, 0x61))).toThrow(LineTooLongError);
    expect(b.push(Buffer.from('ok\n'))).toEqual(['ok']);
    expect(() => b.push(Buffer.alloc(40, 0x61))).toThrow(LineTooLongError);
  });

  it('hands on the head of an oversized line once and ignores what follows until reset', () => {
    const heads: Buffer[] = [];
    const lines: string[] = [];
    const s = new LineSplitter({ maxLineBytes: 100, onLine: (l) => lines.push(String(l)), onOverflow: (h) => heads.push(h) });
    s.push(Buffer.concat([Buffer.from('first\n'), Buffer.alloc(300, 0x62)]));
    s.push(Buffer.from('after\n'));
    expect(lines).toEqual(['first']);
    expect(heads).toHaveLength(1);
    expect(heads[0]).toEqual(Buffer.alloc(OVERFLOW_HEAD_BYTES, 0x62));
    expect(s.pendingBytes).toBe(0);
  });

  it('gives an unfinished last line at the end of input, and nothing when there is none', () => {
    const lines: string[] = [];
    const s = new LineSplitter({ onLine: (l) => lines.push(String(l)), onOverflow: () => undefined });
    s.push(Buffer.from('{"a":1}\n{"b":2}\r'));
    s.finish();
    s.finish();
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('keeps its own copy of a line the stream may reuse the buffer of', () => {
    const lines: Buffer[] = [];
    const s = new LineSplitter({ onLine: (l) => lines.push(l), onOverflow: () => undefined });
    const chunk = Buffer.from('abc');
    s.push(chunk);
    chunk.fill(0x7a);
    s.push(Buffer.from('\n'));
    expect(String(lines[0])).toBe('abc');
  });
});

describe('LineWriter', () => {
  it('queues while the stream is full and resumes on drain, in order', async () => {
    const written: string[] = [];
    let release: (() => void) | undefined;
    const slow = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _enc, cb) {
        written.push(chunk.toString());
        release = cb;
      },
    });
    const w = new LineWriter(slow);
    for (let i = 0; i < 5; i++) w.write({ i, pad: 'x'.repeat(20) });
    expect(written).toHaveLength(1);
    while (written.length < 5) {
      const next = release;
      release = undefined;
      next?.();
      await new Promise((r) => setImmediate(r));
    }
    expect(written.map((l) => /"i":(\d)/.exec(l)?.[1])).toEqual(['0', '1', '2', '3', '4']);
  });

  it('drops writes after end()', async () => {
    const out = new PassThrough();
    const w = new LineWriter(out);
    w.write({ a: 1 });
    w.end();
    w.write({ b: 2 });
    const text = (await out.toArray()).join('');
    expect(text).toBe('{"a":1}\n');
  });

  it('flush() waits for the queued lines, and the write taken at construction is the one used', async () => {
    const written: string[] = [];
    let release: (() => void) | undefined;
    const slow = new Writable({
      highWaterMark: 8,
      write(chunk: Buffer, _enc, cb) {
        if (chunk.length > 0) written.push(chunk.toString());
        release = cb;
      },
    });
    const w = new LineWriter(slow);
    slow.write = () => {
      throw new Error('replaced after the writer took the stream');
    };
    w.write({ a: 'x'.repeat(20) });
    w.write({ b: 1 });
    let flushed = false;
    void w.flush().then(() => (flushed = true));
    for (let i = 0; i < 20 && !flushed; i++) {
      const next = release;
      release = undefined;
      next?.();
      await new Promise((r) => setImmediate(r));
    }
    expect(flushed).toBe(true);
    expect(written).toEqual([`{"a":"${'x'.repeat(20)}"}\n`, '{"b":1}\n']);
  });

  const recording = () => {
    const written: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        if (chunk.length > 0) written.push(chunk.toString());
        cb();
      },
    });
    return { written, sink };
  };

  it('with coalesce job, the lines of one callback go out as one write, in order, and flush() sends them', async () => {
    const { written, sink } = recording();
    const w = new LineWriter(sink, { coalesce: 'job' });
    w.write({ a: 1 });
    await Promise.resolve();
    w.write({ b: 2 });
    expect(written).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(written).toEqual(['{"a":1}\n{"b":2}\n']);
    w.write({ c: 3 });
    await w.flush();
    expect(written).toEqual(['{"a":1}\n{"b":2}\n', '{"c":3}\n']);
  });

  it('with coalesce loop, the lines of every callback before the check phase go out as one write', async () => {
    const timers = async (w: LineWriter) => {
      // Two timers due together run in one timers phase, each a callback of its own.
      await new Promise<void>((resolve) => {
        setTimeout(() => w.write({ a: 1 }), 0);
        setTimeout(() => {
          w.write({ b: 2 });
          resolve();
        }, 0);
      });
      await new Promise((r) => setImmediate(r));
    };
    const loop = recording();
    await timers(new LineWriter(loop.sink, { coalesce: 'loop' }));
    expect(loop.written).toEqual(['{"a":1}\n{"b":2}\n']);
    const job = recording();
    await timers(new LineWriter(job.sink, { coalesce: 'job' }));
    expect(job.written).toEqual(['{"a":1}\n', '{"b":2}\n']);
  });

  it('flush() resolves when the stream fails', async () => {
    const broken = new Writable({
      highWaterMark: 1,
      write(_chunk, _enc, cb) {
        cb(new Error('EPIPE'));
      },
    });
    const w = new LineWriter(broken);
    w.write({ a: 1 });
    await expect(w.flush()).resolves.toBeUndefined();
  });
});
