// The serve token survives restarts (clients and webhook senders keep working) and changes only when asked.
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { LBOT_BIN, startServe } from '../../helpers/serve.js';

async function lbot(dataDir: string, args: string[], env: Record<string, string> = {}) {
  const r = await execa(process.execPath, [LBOT_BIN, '--data-dir', dataDir, ...args], { reject: false, env });
  return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
}

describe('serve token', () => {
  it('is kept across restarts, printed by serve token, and replaced by --rotate for the next start', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-token-'));
    const first = await startServe({ dataDir });
    const firstToken = first.token;
    expect((await first.request('GET', '/v1/runs')).status).toBe(200);
    await first.stop();

    const second = await startServe({ dataDir });
    try {
      expect(second.token).toBe(firstToken);
      const printed = await lbot(dataDir, ['serve', 'token']);
      expect(printed.exitCode, printed.stderr).toBe(0);
      expect(printed.stdout.trim()).toBe(firstToken);
      const rotated = await lbot(dataDir, ['serve', 'token', '--rotate', '--json']);
      expect(rotated.exitCode, rotated.stderr).toBe(0);
      const v = JSON.parse(rotated.stdout) as { token: string; rotated: boolean };
      expect(v.rotated).toBe(true);
      expect(v.token).not.toBe(firstToken);
      expect(v.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(rotated.stderr).toContain('restart lbot serve to use it');
      expect(statSync(path.join(dataDir, 'serve.token')).mode & 0o777).toBe(0o600);
      // The running serve keeps the token it started with until it restarts.
      expect((await second.request('GET', '/v1/runs')).status).toBe(200);
    } finally {
      await second.stop();
    }
    const third = await startServe({ dataDir });
    try {
      const rotated = (await lbot(dataDir, ['serve', 'token'])).stdout.trim();
      expect(third.token).toBe(rotated);
      const old = await fetch(`${third.url}/v1/runs`, { headers: { authorization: `Bearer ${firstToken}` } });
      expect(old.status).toBe(401);
    } finally {
      await third.stop();
    }
  });

  it('a token file others could read, or one not holding a token, is replaced', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-token-'));
    const file = path.join(dataDir, 'serve.token');
    const leaked = 'A'.repeat(43);
    writeFileSync(file, `${leaked}\n`, { mode: 0o644 });
    const fromLeaked = (await lbot(dataDir, ['serve', 'token'])).stdout.trim();
    expect(fromLeaked).not.toBe(leaked);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, 'not a token at all\n', { mode: 0o600 });
    expect((await lbot(dataDir, ['serve', 'token'])).stdout.trim()).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('with LBOT_API_TOKEN, that is the token', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-token-'));
    const r = await lbot(dataDir, ['serve', 'token'], { LBOT_API_TOKEN: 'from-the-environment-token-0123456789' });
    expect(r.stdout.trim()).toBe('from-the-environment-token-0123456789');
    expect(r.stderr).toContain('LBOT_API_TOKEN');
  });
});
