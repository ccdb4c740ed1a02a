// `lbot serve` hardening against a real process: Discord interaction signatures expire after five minutes
// (a recorded request cannot be replayed later), and a non-loopback bind needs a strong token and warns
// that the traffic is plain HTTP, and runner plugins that run sandboxed (or plugins.isolation none).
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempPlugins, type TempPlugins } from '../../helpers/plugins.js';
import { LBOT_BIN, startServe, type ServeProcess } from '../../helpers/serve.js';

type Fixture = { dataDir: string; plugins: TempPlugins; serve?: ServeProcess };
const open: Fixture[] = [];

async function setup(config?: Record<string, unknown>): Promise<Fixture> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-serve-hard-'));
  const plugins = await createTempPlugins(['scripted']);
  if (config) await writeFile(path.join(dataDir, 'lbot.config.json'), JSON.stringify(config));
  const f: Fixture = { dataDir, plugins };
  open.push(f);
  return f;
}

afterEach(async () => {
  for (const f of open.splice(0)) {
    await f.serve?.stop('SIGKILL').catch(() => undefined);
    await rm(f.dataDir, { recursive: true, force: true });
    await f.plugins.cleanup();
  }
});

const STRONG = 'k'.repeat(24) + 'Z9-_q8Wm3xP1vR7t'; // 40 characters

describe('serve: Discord signatures have a freshness window', () => {
  it('a validly signed interaction older (or newer) than 5 minutes is refused with 401; a fresh one passes', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const publicHex = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
    const f = await setup({ serve: { webhooks: { discord: { public_key: publicHex } } } });
    f.serve = await startServe({ dataDir: f.dataDir, pluginsDir: f.plugins.pluginsDir });
    const ping = JSON.stringify({ type: 1, id: '1', application_id: '2', token: 'x', version: 1 });
    const signed = (ts: string) => ({
      'content-type': 'application/json',
      'x-signature-ed25519': sign(null, Buffer.from(ts + ping), privateKey).toString('hex'),
      'x-signature-timestamp': ts,
    });
    const post = (headers: Record<string, string>) => fetch(`${f.serve?.url}/v1/webhooks/discord`, { method: 'POST', body: ping, headers });
    const now = Math.floor(Date.now() / 1000);

    const fresh = await post(signed(String(now)));
    expect(fresh.status).toBe(200);
    const stale = await post(signed(String(now - 3600)));
    expect(stale.status).toBe(401);
    expect(await stale.text()).toContain('too old');
    expect((await post(signed(String(now - 301 - 5)))).status).toBe(401);
    expect((await post(signed(String(now + 3600)))).status).toBe(401);
    expect((await post(signed('1e10'))).status).toBe(401);
  });
});

describe('serve beyond loopback', () => {
  it('refuses to start on 0.0.0.0 with a short LBOT_API_TOKEN: exit 2, a coded error, nothing listening', async () => {
    const f = await setup();
    const r = await execa(
      process.execPath,
      [LBOT_BIN, '--data-dir', f.dataDir, '--plugins', f.plugins.pluginsDir, 'serve', '--host', '0.0.0.0', '--port', '0'],
      {
        env: { LBOT_API_TOKEN: 'hunter2-hunter2-hunter2' },
        reject: false,
        timeout: 30_000,
        stdin: 'ignore',
      },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('lbot: error[invalid_argument]: refusing to listen on 0.0.0.0: LBOT_API_TOKEN has 23 characters');
    expect(r.stderr).toContain('at least 32');
    expect(r.stdout).not.toContain('serve.ready');
    const none = await execa(process.execPath, [LBOT_BIN, '--data-dir', f.dataDir, '--plugins', f.plugins.pluginsDir, 'serve', '--host', '::', '--port', '0'], {
      env: { LBOT_API_TOKEN: '' },
      reject: false,
      timeout: 30_000,
      stdin: 'ignore',
    });
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('without LBOT_API_TOKEN');
  });

  it('starts on 0.0.0.0 with a 32+ character token and warns on stderr that the traffic is plain HTTP', async () => {
    const f = await setup();
    f.serve = await startServe({ dataDir: f.dataDir, pluginsDir: f.plugins.pluginsDir, args: ['--host', '0.0.0.0'], env: { LBOT_API_TOKEN: STRONG } });
    const port = new URL(f.serve.url).port;
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/v1/runs`, { headers: { authorization: `Bearer ${STRONG}` } })).status).toBe(200);
    expect(f.serve.stderr()).toMatch(/serving plain HTTP on 0\.0\.0\.0: .*TLS/);
  });

  it('refuses to start when runner plugins cannot be sandboxed (auto means sandbox), unless plugins.isolation is none', async () => {
    const f = await setup({ box: { bwrap: { bin: '/nonexistent/bwrap' } } });
    const r = await execa(
      process.execPath,
      [LBOT_BIN, '--data-dir', f.dataDir, '--plugins', f.plugins.pluginsDir, 'serve', '--host', '0.0.0.0', '--port', '0'],
      {
        env: { LBOT_API_TOKEN: STRONG },
        reject: false,
        timeout: 30_000,
        stdin: 'ignore',
      },
    );
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      'lbot: error[invalid_argument]: refusing to listen on 0.0.0.0: plugins.isolation is sandbox, but runner plugins cannot be sandboxed here: bubblewrap (/nonexistent/bwrap) is not installed',
    );
    expect(r.stdout).not.toContain('serve.ready');
    await writeFile(
      path.join(f.dataDir, 'lbot.config.json'),
      JSON.stringify({ box: { bwrap: { bin: '/nonexistent/bwrap' } }, plugins: { isolation: 'none' } }),
    );
    f.serve = await startServe({ dataDir: f.dataDir, pluginsDir: f.plugins.pluginsDir, args: ['--host', '0.0.0.0'], env: { LBOT_API_TOKEN: STRONG } });
    expect(f.serve.stderr()).toMatch(/serving on 0\.0\.0\.0 with plugins\.isolation none: runner plugins run unisolated/);
  });

  it('a loopback bind keeps accepting any token and prints no plain-HTTP warning', async () => {
    const f = await setup();
    f.serve = await startServe({ dataDir: f.dataDir, pluginsDir: f.plugins.pluginsDir, args: ['--host', '127.0.0.1'], env: { LBOT_API_TOKEN: 'short' } });
    expect((await f.serve.request('GET', '/v1/runs')).status).toBe(200);
    expect(f.serve.stderr()).not.toContain('plain HTTP');
  });
});
