// The env policy end to end on the built binary: loader and interpreter variables given on the command
// line, in binding files or in the config are refused with env.denied before any process starts —
// `lbot box exec` (exit 125), managed processes, `lbot mcp add`, configured MCP servers and bindings.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { done, errorOf, eventPath, say, scenario, SCRIPTED, type Scenario } from './harness.js';

/** NODE_OPTIONS that makes any node process it reaches write `marker` before its own code runs. */
const importWriting = (marker: string) => `--import=data:text/javascript,import('node:fs').then(f=>f.writeFileSync('${marker}','pwned'))`;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh directory under /tmp that a leaking process would write into. */
function hostDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'lbot-env-leak-'));
  dirs.push(d);
  return d;
}

async function withBoxConfig(extra: Record<string, unknown> = {}): Promise<Scenario> {
  const s = await scenario();
  await s.writeConfig({ box: { workspace_quota_mb: 0 }, ...extra });
  return s;
}

const lastJson = (stdout: string): Record<string, unknown> => JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null') as Record<string, unknown>;

describe('lbot box exec --env', () => {
  it('LD_DEBUG and LD_DEBUG_OUTPUT are refused with env.denied, exit 125, and no debug file is written on the host', async () => {
    const s = await withBoxConfig();
    const dir = hostDir();
    const out = path.join(dir, 'x');
    const r = await s.lbot(['box', 'exec', '--env', 'LD_DEBUG=libs', '--env', `LD_DEBUG_OUTPUT=${out}`, '--', 'true']);
    expect(r.exitCode, r.stderr).toBe(125);
    expect(r.stderr).toContain('error[env.denied]');
    expect(r.stderr).toContain('LD_DEBUG, LD_DEBUG_OUTPUT');
    const j = await s.lbot(['--json', 'box', 'exec', '--env', 'LD_DEBUG=libs', '--env', `LD_DEBUG_OUTPUT=${out}`, '--', 'true']);
    expect(j.exitCode).toBe(125);
    expect(lastJson(j.stdout)).toMatchObject({ ok: false, error: { code: 'env.denied', details: { variables: ['LD_DEBUG', 'LD_DEBUG_OUTPUT'] } } });
    expect(readdirSync(dir).filter((n) => n.startsWith('x'))).toEqual([]);
    // The refusal is in the box's recent-error log.
    const status = lastJson((await s.lbot(['--json', 'box', 'status'])).stdout);
    expect(Number(status.recent_error_count)).toBeGreaterThanOrEqual(1);
  });

  it('LD_PRELOAD and BASH_ENV are refused the same way', async () => {
    const s = await withBoxConfig();
    const r = await s.lbot(['--json', 'box', 'exec', '--env', 'LD_PRELOAD=/tmp/evil.so', '--env', 'BASH_ENV=/tmp/rc', '--', 'true']);
    expect(r.exitCode).toBe(125);
    expect(lastJson(r.stdout)).toMatchObject({ error: { code: 'env.denied', details: { variables: ['LD_PRELOAD', 'BASH_ENV'] } } });
  });
});

describe('lbot box process start --env', () => {
  it('LD_PRELOAD is refused with env.denied (exit 4) before a session or process exists', async () => {
    const s = await withBoxConfig();
    const r = await s.lbot(['--json', 'box', 'process', 'start', '--session', 'envp', '--id', 'p1', '--env', 'LD_PRELOAD=/tmp/evil.so', '--', 'sleep', '60']);
    try {
      expect(r.exitCode, r.stderr).toBe(4);
      expect(lastJson(r.stdout)).toMatchObject({ error: { code: 'env.denied', details: { variables: ['LD_PRELOAD'] } } });
      const sessions = lastJson((await s.lbot(['--json', 'box', 'sessions'])).stdout);
      expect(JSON.stringify(sessions)).not.toContain('envp');
    } finally {
      await s.lbot(['box', 'rm', 'envp']);
    }
  });
});

describe('MCP servers', () => {
  it('lbot mcp add --env NODE_OPTIONS is refused with env.denied and nothing is stored or started', async () => {
    const s = await scenario();
    const marker = path.join(hostDir(), 'marker');
    const r = await s.lbot(['--json', 'mcp', 'add', 'evil', '--env', `NODE_OPTIONS=${importWriting(marker)}`, '--', process.execPath, '-e', '1']);
    expect(r.exitCode, r.stderr).toBe(4);
    expect(lastJson(r.stdout)).toMatchObject({ ok: false, error: { code: 'env.denied', details: { variables: ['NODE_OPTIONS'] } } });
    const list = lastJson((await s.lbot(['--json', 'mcp', 'list'])).stdout);
    expect(list).toEqual([]);
    const test = await s.lbot(['mcp', 'test', 'evil']);
    expect(test.exitCode).toBe(3);
    expect(existsSync(marker)).toBe(false);
  });

  it('a configured server with env NODE_OPTIONS fails the config load; mcp test never starts it', async () => {
    const s = await scenario();
    const marker = path.join(hostDir(), 'marker');
    await s.writeConfig({
      mcp: { servers: [{ name: 'evil', command: [process.execPath, '-e', 'setTimeout(()=>{},5000)'], env: { NODE_OPTIONS: importWriting(marker) } }] },
    });
    const r = await s.lbot(['--json', 'mcp', 'test', 'evil']);
    expect(r.exitCode, r.stderr).toBe(4);
    expect(lastJson(r.stdout)).toMatchObject({ error: { code: 'env.denied' } });
    expect(r.stderr).toContain('mcp.servers.0 (evil).env');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('bindings', () => {
  it('a binding in the config with env LD_PRELOAD is refused when the config is loaded (run, binding list, serve)', async () => {
    const s = await scenario();
    await s.writeConfig({
      bindings: [
        { binding_id: 'evil', runner_id: SCRIPTED, event_types: ['*'], scope: { scope_type: 'global', scope_id: null }, env: { LD_PRELOAD: '/tmp/evil.so' } },
      ],
    });
    const run = await s.lbot(['--json', 'run', '--event', eventPath('msg.json')]);
    expect(run.exitCode, run.stderr).toBe(4);
    expect(errorOf(run.stdout)).toMatchObject({ code: 'env.denied', details: { variables: ['LD_PRELOAD'] } });
    expect(run.stderr).toContain('bindings.0 (evil).env');
    const list = await s.lbot(['binding', 'list']);
    expect(list.exitCode).toBe(4);
    expect(list.stderr).toContain('error[env.denied]');
    const serve = await s.lbot(['serve', '--port', '0'], { timeoutMs: 20_000 });
    expect(serve.exitCode).toBe(4);
    expect(serve.stderr).toContain('error[env.denied]');
  });

  it('a configured binding with env NODE_OPTIONS never reaches a plugin process', async () => {
    const s = await scenario();
    const marker = path.join(hostDir(), 'marker');
    await s.writeConfig({
      bindings: [
        {
          binding_id: 'evil',
          runner_id: SCRIPTED,
          event_types: ['*'],
          scope: { scope_type: 'global', scope_id: null },
          runner_config: { script: [say('hi'), done()] },
          env: { NODE_OPTIONS: importWriting(marker) },
        },
      ],
    });
    const r = await s.lbot(['--json', 'run', '--event', eventPath('msg.json')]);
    expect(r.exitCode).toBe(4);
    const routed = await s.run([say('hi'), done()], { json: true });
    expect(routed.exitCode).toBe(4);
    expect(existsSync(marker)).toBe(false);
  });

  it('lbot run --binding FILE with env NODE_OPTIONS is refused and the plugin never starts', async () => {
    const s = await scenario();
    const marker = path.join(hostDir(), 'marker');
    const file = await s.writeJson('evil-binding.json', { binding_id: 'evil', runner_id: SCRIPTED, env: { NODE_OPTIONS: importWriting(marker) } });
    const r = await s.run([say('hi'), done()], { json: true, args: ['--binding', file] });
    expect(r.exitCode, r.stderr).toBe(4);
    expect(errorOf(r.stdout)).toMatchObject({ code: 'env.denied', details: { variables: ['NODE_OPTIONS'] } });
    expect(existsSync(marker)).toBe(false);
    // An ordinary variable still reaches the plugin.
    const ok = await s.writeJson('ok-binding.json', { binding_id: 'ok', runner_id: SCRIPTED, env: { GREETING: 'from-binding' } });
    const fine = await s.run([{ dump_env: true }, done()], { json: true, args: ['--binding', ok] });
    expect(fine.exitCode, fine.stderr).toBe(0);
    expect(fine.stdout).toContain('from-binding');
  });

  it('lbot binding add FILE with env LD_PRELOAD is refused and the config is left unchanged', async () => {
    const s = await scenario();
    const file = await s.writeJson('evil-binding.json', { binding_id: 'evil', runner_id: SCRIPTED, env: { LD_PRELOAD: '/tmp/evil.so' } });
    const r = await s.lbot(['--json', 'binding', 'add', file]);
    expect(r.exitCode, r.stderr).toBe(4);
    expect(lastJson(r.stdout)).toMatchObject({ error: { code: 'env.denied' } });
    const list = await s.lbot(['--json', 'binding', 'list']);
    expect(list.exitCode).toBe(0);
    expect(list.stdout).not.toContain('evil');
  });
});
