// The remote box: a real `lbot box serve` process with real bwrap sandboxes, driven through the remote client
// and the native tools' remote port, as a host on another machine would use it.
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execaSync } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/core/config.js';
import { LbotError, toLbotError } from '../../../src/core/errors.js';
import { ToolError } from '../../../src/core/tools/paths.js';
import { RemoteBoxClient } from '../../../src/runtime/box/remote/client.js';
import { RemoteBoxToolPort } from '../../../src/runtime/box/remote/tool-port.js';
import { createBoxService } from '../../../src/runtime/box/service.js';
import { BoxToolPortImpl } from '../../../src/runtime/tools/box-tools.js';
import { startBoxServe, type BoxServeProcess } from '../../helpers/box-serve.js';
import { withReason } from '../../helpers/skip.js';
import { bwrapSkipReason, skipNotice } from './helpers.js';

skipNotice('remote box tests');

const roots: string[] = [];
function tempRoot(): string {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'lbot-rbox-it-')));
  roots.push(root);
  return root;
}

async function rejection(p: Promise<unknown>): Promise<LbotError> {
  try {
    await p;
  } catch (err) {
    return toLbotError(err);
  }
  throw new Error('expected a rejection');
}

/** A port nothing listens on (bound, read, released). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const address = srv.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise((r) => srv.close(r));
  return port;
}

const ctx = (run_id = 'run-1') => ({ run_id, signal: new AbortController().signal });

async function removeAll(dataDir: string): Promise<void> {
  const box = createBoxService({ dataDir, config: ConfigSchema.parse({}).box });
  for (const s of await box.sessions()) await box.removeSession(s.session_id).catch(() => undefined);
}

describe.skipIf(bwrapSkipReason !== null)(withReason('lbot box serve', bwrapSkipReason), () => {
  let server: BoxServeProcess;
  let client: RemoteBoxClient;

  beforeAll(async () => {
    server = await startBoxServe({ dataDir: path.join(tempRoot(), 'box'), args: ['--body-limit', '65536'] });
    client = new RemoteBoxClient({ url: server.url, token: server.token });
  });

  afterAll(async () => {
    await removeAll(server.dataDir);
    await server.stop();
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });

  it('runs a command in a real sandbox and answers its result (exec round trip)', async () => {
    const r = await client.exec({ cmd: 'echo hi; echo err >&2; exit 3' });
    expect(r).toMatchObject({ backend: 'bwrap', status: 'completed', ok: false, exit_code: 3, stdout: 'hi\n', stderr: 'err\n' });
    expect(r.effective_spec.network).toBe('off');
    expect((await client.status()).available).toBe(true);
  });

  it('keeps one session for two clients (two workers): files written by one are read by the other', async () => {
    const workerA = new RemoteBoxToolPort(new RemoteBoxClient({ url: server.url, token: server.token }));
    const workerB = new RemoteBoxToolPort(new RemoteBoxClient({ url: server.url, token: server.token }));
    const session = { id: 'conv_shared' };
    expect(await workerA.available()).toBe(true);
    await expect(workerA.exec(session, { command: 'echo from-a > /workspace/note; echo $$ > /tmp/a' }, ctx('run-a'))).resolves.toMatchObject({ ok: true });
    const read = await workerB.fileOp(session, { op: 'read', path: '/workspace/note', offset: null, limit: null, max_bytes: 10_000 }, ctx('run-b'));
    expect(JSON.stringify(read)).toContain('from-a');
    await workerB.fileOp(session, { op: 'write', path: '/workspace/b.txt', content: 'from-b', append: false }, ctx('run-b'));
    await expect(workerA.exec(session, { command: 'cat /workspace/b.txt' }, ctx('run-a'))).resolves.toMatchObject({ stdout: 'from-b' });
    const sessions = await client.sessions();
    expect(sessions.filter((s) => s.session_id === 'conv_shared')).toHaveLength(1);
    expect(await client.session('conv_shared')).toMatchObject({ session_id: 'conv_shared', alive: true, processes: [] });
    await client.removeSession('conv_shared');
    expect((await rejection(client.session('conv_shared'))).code).toBe('box.session_not_found');
  });

  it('refuses a missing or wrong token with 401 unauthorized, and logs the refusal', async () => {
    for (const token of [null, 'wrong-token']) {
      const e = await rejection(new RemoteBoxClient({ url: server.url, token }).exec({ cmd: 'true' }));
      expect(e.code).toBe('unauthorized');
      expect(e.hint).toMatch(/LBOT_BOX_TOKEN/);
    }
    const res = await fetch(`${server.url}/v1/box/status`, { headers: { authorization: 'Bearer nope' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.json()).toMatchObject({ ok: false, error: { code: 'unauthorized', details: { reason: 'wrong_token' } } });
    const refusals = server
      .stderr()
      .split('\n')
      .filter((l) => l.includes('"auth.refused"'));
    expect(refusals.length).toBeGreaterThanOrEqual(3);
    expect(refusals.join('\n')).not.toContain('wrong-token');
  });

  it('answers an oversized body with 413 payload_too_large', async () => {
    const big = 'x'.repeat(100_000);
    const res = await fetch(`${server.url}/v1/box/exec`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cmd: `echo ${big}` }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ ok: false, error: { code: 'payload_too_large' } });
    const port = new RemoteBoxToolPort(client);
    const e = await rejection(port.fileOp({ id: 'big' }, { op: 'write', path: '/workspace/big', content: big, append: false }, ctx()));
    expect(e.code).toBe('payload_too_large');
  });

  it('refuses hostile session ids and paths with the same codes as the local service', async () => {
    const local = createBoxService({ dataDir: path.join(tempRoot(), 'local'), config: ConfigSchema.parse({ box: { workspace_quota_mb: 0 } }).box });
    const hostile = [
      { cmd: 'true', session_id: '../../etc' },
      { cmd: 'true', session_id: 'a/b' },
      { cmd: 'true', session_id: 's1', host_path: '/etc' },
      { cmd: 'true', session_id: 's1', workdir: 'relative/dir' },
      { cmd: 'true', session_id: 's1', env: { LD_PRELOAD: '/x.so' } },
      { cmd: 'true', session_id: 's1', extra_mounts: [{ host_path: '/root', mount_path: '/workspace/r', mode: 'ro' as const }] },
    ];
    for (const input of hostile) {
      const there = await rejection(client.exec(input));
      const here = await rejection(local.exec(input));
      expect(there.code, JSON.stringify(input)).toBe(here.code);
      expect(there.code).not.toBe('internal');
    }
    const pathSession = '../x';
    const there = await rejection(client.session(pathSession));
    expect(there.code).toBe((await rejection(local.session(pathSession))).code);
    // A file path out of the workspace fails the tool call the same way on both.
    const escape = { op: 'read' as const, path: '/workspace/../../etc/passwd', offset: null, limit: null, max_bytes: 10_000 };
    const remoteEscape = await new RemoteBoxToolPort(client).fileOp({ id: 'esc' }, escape, ctx()).catch((err: unknown) => err);
    const localEscape = await new BoxToolPortImpl(local).fileOp({ id: 'esc' }, escape, ctx()).catch((err: unknown) => err);
    expect(remoteEscape).toBeInstanceOf(ToolError);
    expect(localEscape).toBeInstanceOf(ToolError);
    expect(String(remoteEscape)).toBe(String(localEscape));
    await client.removeSession('esc').catch(() => undefined);
    await local.removeSession('esc').catch(() => undefined);
  });

  it('manages processes and attaches to one over a WebSocket (stdin in, stdout out, end of input, exit)', async () => {
    await client.startProcess('procs', { process_id: 'cat', command: 'cat' });
    expect(await client.processStatus('procs', 'cat')).toMatchObject({ status: 'running', command: 'cat' });
    const att = await client.attach('procs', 'cat');
    const out: Buffer[] = [];
    att.on('data', (b) => out.push(b));
    const exited = new Promise<number | null>((resolve) => att.on('exit', resolve));
    const closed = new Promise<void>((resolve) => att.on('close', resolve));
    att.write('hello over ws\n');
    att.end();
    expect(await exited).toBe(0);
    await closed;
    expect(Buffer.concat(out).toString()).toBe('hello over ws\n');
    // Refusals before the upgrade keep their codes: unknown process, wrong token, hostile id.
    expect((await rejection(client.attach('procs', 'nope'))).code).toBe('box.process_not_found');
    expect((await rejection(new RemoteBoxClient({ url: server.url, token: 'wrong' }).attach('procs', 'cat'))).code).toBe('unauthorized');
    expect((await rejection(client.attach('../etc', 'cat'))).code).toBe('box.validation');
    await client.startProcess('procs', { process_id: 'sleeper', command: 'sleep', args: ['600'] });
    await client.stopProcess('procs', 'sleeper');
    expect((await rejection(client.processStatus('procs', 'sleeper'))).code).toBe('box.process_not_found');
    await client.removeSession('procs');
  });

  it('stops the command when the caller goes away (a cancelled run)', async () => {
    const ac = new AbortController();
    const call = rejection(client.exec({ cmd: 'sleep 100', session_id: 'cancel', timeout_sec: 110, profile: 'network_extended' }, ac.signal));
    const local = createBoxService({ dataDir: server.dataDir, config: ConfigSchema.parse({}).box });
    for (let i = 0; i < 200 && !(await local.sessions()).some((x) => x.session_id === 'cancel'); i++) await new Promise((r) => setTimeout(r, 50));
    ac.abort();
    expect((await call).code).toBe('cancelled');
    // The next command of the session waits for the one before it: it runs only because that one was stopped.
    await expect(client.exec({ cmd: 'echo next', session_id: 'cancel', profile: 'network_extended' })).resolves.toMatchObject({ stdout: 'next\n' });
    await client.removeSession('cancel');
  });

  it('says which URL and what to do when nothing listens there', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const e = await rejection(new RemoteBoxClient({ url, token: 't' }).exec({ cmd: 'true' }));
    expect(e.code).toBe('box.unavailable');
    expect(e.retryable).toBe(true);
    expect(e.message).toContain(url);
    expect(e.details).toMatchObject({ reason: 'connect_failed', errno: 'ECONNREFUSED' });
    expect(e.hint).toMatch(/lbot box serve/);
    await expect(new RemoteBoxToolPort(new RemoteBoxClient({ url, token: 't' })).available()).resolves.toBe(false);
  });
});

describe.skipIf(bwrapSkipReason !== null)(withReason('lbot box serve dying mid-call', bwrapSkipReason), () => {
  it('fails the call in flight with a retryable box.unavailable (connection_lost)', async () => {
    const server = await startBoxServe({ dataDir: path.join(tempRoot(), 'dying') });
    try {
      const client = new RemoteBoxClient({ url: server.url, token: server.token });
      const call = rejection(client.exec({ cmd: 'echo started > /workspace/s; sleep 60', session_id: 'dying' }));
      // Kill the server once the command runs in the sandbox (its marker file exists).
      const local = createBoxService({ dataDir: server.dataDir, config: ConfigSchema.parse({}).box });
      for (let i = 0; i < 200 && !(await local.sessions()).some((s) => s.session_id === 'dying'); i++) await new Promise((r) => setTimeout(r, 50));
      server.proc.kill('SIGKILL');
      const e = await call;
      expect(e.code).toBe('box.unavailable');
      expect(e.retryable).toBe(true);
      expect(e.details).toMatchObject({ reason: 'connection_lost', url: server.url });
      expect(e.message).toContain(server.url);
    } finally {
      await server.stop();
      await removeAll(server.dataDir);
    }
  });
});

describe.skipIf(bwrapSkipReason !== null)(withReason('lbot box serve over TLS', bwrapSkipReason), () => {
  it('serves HTTPS with --tls-cert/--tls-key; a client trusting the certificate runs a command', async () => {
    const root = tempRoot();
    const cert = path.join(root, 'box.crt');
    const key = path.join(root, 'box.key');
    execaSync('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]);
    const server = await startBoxServe({ dataDir: path.join(root, 'tls'), args: ['--tls-cert', cert, '--tls-key', key] });
    try {
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:/);
      const client = new RemoteBoxClient({ url: server.url, token: server.token, ca: readFileSync(cert) });
      await expect(client.exec({ cmd: 'echo secure' })).resolves.toMatchObject({ stdout: 'secure\n' });
      // Without trusting the certificate the connection is refused, naming the URL.
      const e = await rejection(new RemoteBoxClient({ url: server.url, token: server.token }).exec({ cmd: 'true' }));
      expect(e.code).toBe('box.unavailable');
      expect(e.message).toContain(server.url);
    } finally {
      await server.stop();
      await removeAll(server.dataDir);
    }
  });
});
