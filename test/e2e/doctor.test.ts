// `lbot doctor` diagnoses instead of failing: a config lbot cannot load is one failed check among the others.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const BIN = path.join(import.meta.dirname, '..', '..', 'bin', 'lbot.js');

type Report = { ok: boolean; checks: Array<{ name: string; status: string; detail: string }>; box: { backends: unknown[] } };

async function doctor(dataDir: string, json: boolean) {
  const r = await execa(process.execPath, [BIN, '--data-dir', dataDir, 'doctor', ...(json ? ['--json'] : [])], { reject: false });
  return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
}

describe('lbot doctor', () => {
  it('names a broken config as a failed check, still checks the rest, and exits 1', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-doctor-'));
    writeFileSync(path.join(dataDir, 'lbot.config.json'), '{"plugins": ');
    const text = await doctor(dataDir, false);
    expect(text.exitCode, text.stderr).toBe(1);
    expect(text.stdout).toMatch(/^FAIL config: .*lbot\.config\.json:\d+:\d+: invalid JSON.*lbot config edit/m);
    expect(text.stdout).toMatch(/^ok {3}node: /m);
    expect(text.stdout).toMatch(/^box: /m);
    const json = await doctor(dataDir, true);
    expect(json.exitCode).toBe(1);
    const report = JSON.parse(json.stdout) as Report;
    expect(report.ok).toBe(false);
    expect(report.checks.map((c) => c.name)).toEqual(['node', 'data_dir', 'config', 'plugin_sandbox', 'plugin_runtime', 'python3']);
    expect(report.checks.find((c) => c.name === 'config')?.status).toBe('fail');
    expect(report.box.backends.length).toBeGreaterThan(0);
  });

  it('a schema error names the field; a good config passes', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-doctor-'));
    writeFileSync(path.join(dataDir, 'lbot.config.json'), '{"plugins": {"isolation": "nope"}}');
    const bad = JSON.parse((await doctor(dataDir, true)).stdout) as Report;
    expect(bad.checks.find((c) => c.name === 'config')?.detail).toContain('plugins.isolation');
    writeFileSync(path.join(dataDir, 'lbot.config.json'), '{"plugins": {"isolation": "none"}}');
    const good = await doctor(dataDir, true);
    expect(good.exitCode, good.stdout).toBe(0);
    const report = JSON.parse(good.stdout) as Report;
    expect(report.checks.find((c) => c.name === 'plugin_sandbox')).toMatchObject({ status: 'ok', detail: expect.stringContaining('plugins.isolation none') });
    // The build made the plugin runtime's code cache with this node: plugin processes start from it.
    expect(report.checks.find((c) => c.name === 'plugin_runtime')).toMatchObject({ status: 'ok', detail: expect.stringContaining('code cache') });
  });
});
