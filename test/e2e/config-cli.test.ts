// `lbot config get|set|unset|edit` through the built binary, on a real data dir.
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const BIN = path.join(import.meta.dirname, '..', '..', 'bin', 'lbot.js');

function scenario() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-config-'));
  const file = path.join(dataDir, 'lbot.config.json');
  const lbot = async (args: string[], env: Record<string, string> = {}) => {
    const r = await execa(process.execPath, [BIN, '--data-dir', dataDir, ...args], { reject: false, env: { NO_COLOR: '1', ...env } });
    return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
  };
  const json = async (args: string[], env: Record<string, string> = {}) => {
    const r = await lbot([...args, '--json'], env);
    return { r, v: JSON.parse(r.stdout.split('\n').at(-1) ?? 'null') as Record<string, unknown> };
  };
  /** An editor that replaces the file it is given with `content`. */
  const editor = (content: string) => {
    const script = path.join(dataDir, `editor-${Math.random().toString(36).slice(2)}.sh`);
    writeFileSync(script, `#!/bin/sh\ncat > "$1" <<'LBOT_EOF'\n${content}\nLBOT_EOF\n`);
    chmodSync(script, 0o755);
    return script;
  };
  return { dataDir, file, lbot, json, editor };
}

describe('lbot config', () => {
  it('set validates the key and the value, get tells where the value comes from, unset brings the default back', async () => {
    const s = scenario();
    expect((await s.json(['config', 'get', 'plugins.isolation'])).v).toEqual({ key: 'plugins.isolation', value: 'auto', source: 'default' });
    const bad = await s.json(['config', 'set', 'plugins.isolation', 'sandbx']);
    expect(bad.r.exitCode).toBe(2);
    expect(bad.v).toMatchObject({ ok: false, error: { code: 'invalid_argument' } });
    expect(bad.r.stderr).toContain('hint: plugins.isolation takes one of auto, sandbox, none');
    const typo = await s.lbot(['config', 'set', 'box.limts.memory_mb', '1']);
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain('did you mean box.limits?');
    expect(() => statSync(s.file)).toThrow(); // nothing refused was written

    expect((await s.lbot(['config', 'set', 'plugins.limits.memory_mb', '2048'])).stdout).toBe('plugins.limits.memory_mb = 2048');
    expect(JSON.parse(readFileSync(s.file, 'utf8'))).toEqual({ plugins: { limits: { memory_mb: 2048 } } });
    expect(statSync(s.file).mode & 0o777).toBe(0o600);
    expect((await s.json(['config', 'get', 'plugins.limits.memory_mb'])).v).toMatchObject({ value: 2048, source: 'file' });
    expect((await s.json(['config', 'get', 'plugins.limits.memory_mb'], { LBOT__PLUGINS__LIMITS__MEMORY_MB: '512' })).v).toMatchObject({
      value: 512,
      source: 'env',
    });

    expect((await s.lbot(['config', 'unset', 'plugins.limits.memory_mb'])).stdout).toBe('plugins.limits.memory_mb removed');
    expect((await s.json(['config', 'get', 'plugins.limits.memory_mb'])).v).toMatchObject({ value: 1024, source: 'default' });
  });

  it('masks secrets on get and set', async () => {
    const s = scenario();
    const set = await s.lbot(['config', 'set', 'serve.webhooks.slack.signing_secret', 's3cret-value']);
    expect(set.exitCode, set.stderr).toBe(0);
    expect(set.stdout).not.toContain('s3cret-value');
    const got = await s.lbot(['config', 'get', 'serve.webhooks']);
    expect(got.stdout).toContain('signing_secret');
    expect(got.stdout).not.toContain('s3cret-value');
    expect(readFileSync(s.file, 'utf8')).toContain('s3cret-value');
  });

  it('edit installs an edit that loads, keeps the config and the draft when it does not, and repairs a broken file', async () => {
    const s = scenario();
    writeFileSync(s.file, '{"plugins": {"isolation": "none"}}');
    const broken = await s.lbot(['config', 'edit'], { EDITOR: s.editor('{"plugins": {"isolation": "nope"}}'), VISUAL: '' });
    expect(broken.exitCode).toBe(2);
    expect(broken.stderr).toContain('error[config.invalid]');
    expect(broken.stderr).toMatch(/hint: the config is unchanged; your edit is kept in .*\.lbot\.config\.edit-\d+\.json/);
    expect(JSON.parse(readFileSync(s.file, 'utf8'))).toEqual({ plugins: { isolation: 'none' } });

    writeFileSync(s.file, '{"plugins": ');
    expect((await s.lbot(['config', 'show'])).exitCode).toBe(2);
    const fixed = await s.lbot(['config', 'edit'], { EDITOR: s.editor('{"plugins": {"isolation": "sandbox"}}'), VISUAL: '' });
    expect(fixed.exitCode, fixed.stderr).toBe(0);
    expect((await s.json(['config', 'get', 'plugins.isolation'])).v).toMatchObject({ value: 'sandbox', source: 'file' });
    expect(statSync(s.file).mode & 0o777).toBe(0o600);
  });
});
