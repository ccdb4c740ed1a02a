// Managed processes and the authenticated relay (acceptance AC-108, AC-109, AC-215; box.md §8).
import { statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import { FRAME, FrameDecoder, encodeFrame } from '../../../src/runtime/box/attach-protocol.js';
import { boxFixture, bwrapSkipReason, disposeFixture, skipNotice, waitFor, type BoxFixture } from './helpers.js';
import { withReason } from '../../helpers/skip.js';

skipNotice('box managed process tests');
const fixtures: BoxFixture[] = [];
const fixture = () => {
  const f = boxFixture();
  fixtures.push(f);
  return f;
};
afterEach(async () => {
  while (fixtures.length > 0) {
    const f = fixtures.pop();
    if (f) await disposeFixture(f);
  }
});

async function code(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    if (err instanceof LbotError) return err.code;
    throw err;
  }
  return 'ok';
}

/** Sends `hello` (or raw bytes) to the relay and returns the first frame's JSON. */
function rawRelay(socket: string, send: Buffer | null): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection(socket);
    const dec = new FrameDecoder();
    sock.on('connect', () => {
      if (send) sock.write(send);
    });
    sock.on('data', (c: Buffer) => {
      const [f] = dec.push(c);
      if (f) {
        resolve(JSON.parse(f.payload.toString('utf8')) as Record<string, unknown>);
        sock.destroy();
      }
    });
    sock.on('error', reject);
  });
}

describe.skipIf(bwrapSkipReason !== null)(withReason('managed processes', bwrapSkipReason), () => {
  it('starts, lists, stops and refuses duplicates; exited processes report code and stderr (AC-108)', async () => {
    const f = fixture();
    await f.box.startProcess('p1', { process_id: 'a', command: 'sleep', args: ['600'] });
    await f.box.startProcess('p1', { process_id: 'b', command: 'sleep', args: ['600'], env: { Z: '1', A: '2' } });
    await f.box.stopProcess('p1', 'a');
    const b = f.box.processStatus('p1', 'b');
    expect(b).toMatchObject({ status: 'running', command: 'sleep', args: ['600'], env_keys: ['A', 'Z'], cwd: '/workspace' });
    expect(await code(() => f.box.processStatus('p1', 'a'))).toBe('box.process_not_found');
    expect(await code(f.box.startProcess('p1', { process_id: 'b', command: 'sleep', args: ['1'] }))).toBe('box.process_conflict');
    expect(await code(() => f.box.processStatus('p1', 'zzz'))).toBe('box.process_not_found');
    await f.box.startProcess('p1', { process_id: 'c', command: 'sh', args: ['-c', 'echo first >&2; echo oops >&2; exit 4'] });
    expect(await waitFor(() => f.box.processStatus('p1', 'c').status === 'exited', 5000)).toBe(true);
    expect(f.box.processStatus('p1', 'c')).toMatchObject({ exit_code: 4, stderr_preview: 'first\noops' });
    expect((await f.box.session('p1')).managed_processes).toBe(1);
  });

  it('bridges stdin and stdout through the relay; a second client is refused (AC-109)', async () => {
    const f = fixture();
    await f.box.startProcess('p2', { process_id: 'cat', command: 'cat' });
    const conn = await f.box.attach('p2', 'cat');
    const echoed = new Promise<string>((resolve) => {
      let got = '';
      conn.on('data', (b) => {
        got += b.toString('utf8');
        if (got.includes('\n')) resolve(got);
      });
    });
    conn.write('hello\n');
    expect(await echoed).toBe('hello\n');
    expect(f.box.processStatus('p2', 'cat').attached).toBe(true);
    expect(await code(f.box.attach('p2', 'cat'))).toBe('box.process_conflict');
    conn.detach();
    expect(await waitFor(() => !f.box.processStatus('p2', 'cat').attached, 3000)).toBe(true);
    expect(f.box.processStatus('p2', 'cat').status).toBe('running');
  });

  it('listens on a private socket and refuses connections without the token (AC-109, AC-215)', async () => {
    const f = fixture();
    await f.box.startProcess('p3', { process_id: 'cat', command: 'cat' });
    const socket = f.box.processSocket('p3', 'cat');
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(socket)).mode & 0o077).toBe(0);
    const wrong = await rawRelay(socket, encodeFrame(FRAME.hello, JSON.stringify({ token: 'guess' })));
    expect(wrong).toMatchObject({ ok: false, error: { code: 'box.unauthenticated' } });
    const garbage = await rawRelay(socket, Buffer.from('GET / HTTP/1.1\r\n\r\n'));
    expect(garbage).toMatchObject({ ok: false, error: { code: 'box.unauthenticated' } });
    const data = await rawRelay(socket, encodeFrame(FRAME.data, 'id\n'));
    expect(data).toMatchObject({ ok: false, error: { code: 'box.unauthenticated' } });
  });

  it('stops every process when the session is removed', async () => {
    const f = fixture();
    await f.box.startProcess('p4', { process_id: 'x', command: 'sleep', args: ['600'] });
    await f.box.removeSession('p4');
    expect(await code(() => f.box.processStatus('p4', 'x'))).toBe('box.session_not_found');
  });
});
