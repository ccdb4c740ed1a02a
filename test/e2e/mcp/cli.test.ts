// Acceptance §7 through the built CLI: lbot mcp add/test/list/show/tools/remove (AC-150, AC-151, AC-153,
// AC-154, AC-155, AC-157, AC-159, AC-160), and MCP tools in runs (AC-157, AC-161).
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, done, dump, errorOf, list, pick, reports, scenario, SCRIPTED, type Scenario } from '../host/harness.js';
import { execa } from 'execa';
import { REPO_ROOT } from '../../helpers/plugins.js';
import { freePort } from '../../integration/mcp/helpers.js';
import { boxBackend } from '../../helpers/box.js';
import { withReason } from '../../helpers/skip.js';

const FIXTURES = path.join(REPO_ROOT, 'fixtures', 'mcp');
const fixture = (name: string) => path.join(FIXTURES, name);
const EVERYTHING = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const SLOW = !!process.env.LBOT_SKIP_SLOW;
/** Whether a box backend works here (native exec and box-hosted servers need one). */
const BOX = boxBackend();
if (SLOW) console.warn('AC-153 and AC-154 are skipped: LBOT_SKIP_SLOW is set (they wait for real retry delays and a 30 s handshake budget)');

async function mcpJson(
  s: Scenario,
  args: string[],
  env?: Record<string, string>,
): Promise<{ exitCode: number; json: Record<string, unknown>; stderr: string; stdout: string }> {
  const r = await s.lbot(['--json', 'mcp', ...args], env ? { env } : {});
  const last = r.stdout.trim().split('\n').filter(Boolean).at(-1) ?? '{}';
  return { exitCode: r.exitCode, json: JSON.parse(last) as Record<string, unknown>, stderr: r.stderr, stdout: r.stdout };
}

/** The report of `mcp test`: the object itself, or a failed one from the error envelope's details. */
function tested(r: { json: Record<string, unknown> }): Record<string, unknown> {
  const failed = pick(r.json, 'error.details.test');
  return failed !== undefined && failed !== null && typeof failed === 'object' ? (failed as Record<string, unknown>) : r.json;
}

async function bindingFile(s: Scenario, resource_policy: Record<string, unknown>): Promise<string> {
  return s.writeJson(`binding-${randomUUID()}.json`, { binding_id: 'b1', runner_id: SCRIPTED, resource_policy });
}

describe('lbot mcp (acceptance §7)', () => {
  it('AC-150 add and test a stdio server, then list it', async () => {
    const s = await scenario();
    expect((await s.lbot(['mcp', 'add', 'echo', '--', 'node', fixture('echo.js')])).exitCode).toBe(0);
    const test = await mcpJson(s, ['test', 'echo']);
    expect(test.exitCode).toBe(0);
    expect(test.json).toMatchObject({ status: 'connected', tools: ['echo', 'slow'], retry_count: 0 });
    expect(pick(test.json, 'timings.connect_ms')).toEqual(expect.any(Number));
    const listed = await mcpJson(s, ['list']);
    expect(listed.json).toEqual([expect.objectContaining({ name: 'echo', mode: 'stdio', status: expect.any(String), retry_count: 0, error_phase: null })]);
  });

  it('AC-151 remote configs, invalid configs and server names', async () => {
    const s = await scenario();
    expect((await s.lbot(['mcp', 'add', 'web', '--url', 'https://mcp.example/sse', '--transport', 'sse'])).exitCode).toBe(0);
    expect(pick((await mcpJson(s, ['show', 'web'])).json, 'server.transport')).toBe('sse');
    for (const args of [
      ['add', 'w1', '--url', 'ftp://x', '--transport', 'sse'],
      ['add', 'w2', '--url', 'https://x', '--transport', 'carrier-pigeon'],
      ['add', 'w3'],
      ['add', 'a/b', '--', 'node', fixture('echo.js')],
      ['add', 'has space', '--', 'node', fixture('echo.js')],
    ]) {
      const r = await mcpJson(s, args);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.json).toMatchObject({ ok: false, error: { code: 'mcp.invalid_config' } });
    }
    expect((await s.lbot(['mcp', 'add', 'acme__echo', '--', 'node', fixture('echo.js')])).exitCode).toBe(0);
    expect(pick((await mcpJson(s, ['show', 'acme__echo'])).json, 'server.name')).toBe('acme__echo');
    const dup = await mcpJson(s, ['add', 'acme__echo', '--', 'node', fixture('echo.js')]);
    expect(dup.exitCode).toBe(8);
    expect(dup.json).toMatchObject({ error: { code: 'mcp.exists' } });
  });

  it.skipIf(SLOW)(withReason('AC-153 crash on start: 4 attempts, then error', SLOW && 'LBOT_SKIP_SLOW is set: it waits for real retry delays'), async () => {
    const s = await scenario();
    // The attempt count is what is checked here; the default delays (2, 4, 8 s) are checked in test/unit/mcp/config.test.ts.
    await s.writeConfig({ mcp: { retry_delays_sec: [0.2, 0.2, 0.2] } });
    await s.lbot(['mcp', 'add', 'bad', '--', 'node', fixture('crash-on-start.js')]);
    const r = await mcpJson(s, ['test', 'bad']);
    expect(r.json).toMatchObject({ ok: false, error: { code: 'mcp.connect_failed' } });
    expect(tested(r)).toMatchObject({ status: 'error', retry_count: 4 });
    expect(['process_start', 'mcp_init']).toContain(tested(r).error_phase);
    expect(String(tested(r).error_message)).toMatch(/4 attempts/);
    expect(r.exitCode).toBe(6);
  });

  it.skipIf(SLOW)(
    withReason('AC-154 handshake timeout of a host stdio server', SLOW && 'LBOT_SKIP_SLOW is set: it waits for the 30 s handshake budget'),
    async () => {
      const s = await scenario();
      // The message names the configured budget; the 30 s default is checked in test/unit/mcp/config.test.ts.
      await s.writeConfig({ mcp: { start_timeout_sec: 3 } });
      await s.lbot(['mcp', 'add', 'mute', '--', 'node', fixture('no-handshake.js')]);
      const r = await mcpJson(s, ['test', 'mute']);
      expect(tested(r)).toMatchObject({ status: 'error', error_phase: 'mcp_init' });
      expect(String(tested(r).error_message)).toMatch(/timeout/i);
      expect(String(tested(r).error_message)).toMatch(/\b3 s/);
    },
  );

  it('AC-155 a box-hosted server without the box: box_unavailable at once, never on the host; HTTP servers unaffected', async () => {
    const s = await scenario();
    const marker = path.join(s.root, 'ran-on-host');
    await s.lbot(['mcp', 'add', 'boxed', '--in-box', '--', 'sh', '-c', `touch ${marker}; exec node ${fixture('echo.js')}`]);
    const env = { LBOT__BOX__ENABLED: 'false' };
    const r = await mcpJson(s, ['test', 'boxed'], env);
    expect(tested(r)).toMatchObject({ status: 'error', error_phase: 'box_unavailable', retry_count: 1 });
    expect(existsSync(marker)).toBe(false);
    const port = await freePort();
    const http = execa(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { PORT: String(port) }, reject: false, stdio: 'ignore' });
    try {
      await s.lbot(['mcp', 'add', 'remote', '--url', `http://127.0.0.1:${port}/mcp`]);
      let remote = await mcpJson(s, ['test', 'remote'], env);
      for (let i = 0; i < 20 && tested(remote).status !== 'connected'; i++) {
        await new Promise((res) => setTimeout(res, 250));
        remote = await mcpJson(s, ['test', 'remote'], env);
      }
      expect(remote.json).toMatchObject({ status: 'connected' });
    } finally {
      http.kill('SIGKILL');
      await http;
    }
  });

  it('AC-157 a server tool named exec is listed as <server>__exec with a warning', async () => {
    const s = await scenario();
    await s.lbot(['mcp', 'add', 'srv', '--', 'node', fixture('exec-tool.js')]);
    const r = await mcpJson(s, ['tools']);
    expect(r.exitCode).toBe(0);
    const names = (r.json as unknown as unknown[]).map((t) => pick(t, 'name'));
    expect(names).toContain('srv__exec');
    expect(names).not.toContain('exec');
    expect(r.stderr).toMatch(/warning: .*srv__exec/);
    expect(r.stdout).not.toContain('warning');
  });

  it('a server listing 10,000 tools with one malformed tool and a 5 MiB description stays connected; the bad tool is dropped with a warning', async () => {
    const s = await scenario();
    await s.lbot(['mcp', 'add', 'many', '--', 'node', fixture('many-tools.js')]);
    const test = await mcpJson(s, ['test', 'many']);
    expect(test.exitCode, test.stderr).toBe(0);
    expect(test.json).toMatchObject({ status: 'connected', ok: true, retry_count: 0 });
    const tested = list(test.json, 'tools');
    expect(tested).toHaveLength(9999);
    expect(tested).not.toContain('tool_04321');
    expect(test.stderr).toMatch(/warning: .*tool "tool_04321" is dropped: inputSchema/);
    const tools = await mcpJson(s, ['tools', 'many']);
    expect(tools.exitCode, tools.stderr).toBe(0);
    const listed = tools.json as unknown as unknown[];
    expect(listed).toHaveLength(9999);
    const big = listed.find((t) => pick(t, 'name') === 'tool_00007');
    const description = String(pick(big, 'description'));
    expect(description.startsWith('BIG-START')).toBe(true);
    expect(description).toContain('description truncated');
    expect(Buffer.byteLength(description)).toBeLessThanOrEqual(64 * 1024);
    const warnings = tools.stderr;
    expect(warnings).toContain('tool "tool_04321" is dropped: inputSchema');
    expect(warnings).toMatch(/tool "tool_00007": its description of \d+ bytes is truncated/);
    const call = await mcpJson(s, ['call', 'many', 'tool_09999', '--args', '{"text":"hi"}']);
    expect(call.exitCode, call.stderr).toBe(0);
    expect(JSON.stringify(call.json)).toContain('tool_09999:hi');
  });

  /** A run that calls `exec` and `srv__exec` with both granted; the context dump and both replies. */
  async function execAndQualified(env?: Record<string, string>) {
    const s = await scenario();
    await s.lbot(['mcp', 'add', 'srv', '--', 'node', fixture('exec-tool.js')]);
    const binding = await bindingFile(s, { allowed_tool_names: ['exec', 'srv__exec'] });
    const r = await s.run(
      [
        dump,
        api('tools.call', { tool_name: 'exec', parameters: { command: 'echo native' } }),
        api('tools.call', { tool_name: 'srv__exec', parameters: { command: 'x' } }),
        done(),
      ],
      { json: true, args: ['--binding', binding], ...(env ? { env } : {}) },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [ctx, exec, qualified] = reports(r.stdout);
    const tools = list(ctx, 'resources.tools');
    expect(tools.map((t) => pick(t, 'tool_name'))).toContain('srv__exec');
    expect(JSON.stringify(exec)).not.toContain('MCP-EXEC');
    expect(JSON.stringify(pick(qualified, 'result.result'))).toContain('MCP-EXEC x');
    return { exec, nativeExec: tools.find((t) => pick(t, 'tool_name') === 'exec') };
  }

  it('AC-157 in a run without the box: exec is not granted (never the MCP tool); srv__exec reaches the server', async () => {
    const { nativeExec } = await execAndQualified({ LBOT__BOX__ENABLED: 'false' });
    expect(nativeExec).toBeUndefined();
  });

  it.skipIf(!BOX.usable)(
    withReason('AC-157 in a run with the box: exec is the native tool, never the MCP server; srv__exec reaches the server', !BOX.usable && BOX.reason),
    async () => {
      const { exec, nativeExec } = await execAndQualified();
      expect(pick(nativeExec, 'tool_type')).toBe('native');
      expect(exec).toMatchObject({ ok: true, result: { result: { stdout: 'native\n' } } });
    },
  );

  it('AC-159 remove a server: show exits 3 with mcp.not_found, runs no longer list its tools', async () => {
    const s = await scenario();
    await s.lbot(['mcp', 'add', 'echo', '--', 'node', fixture('echo.js')]);
    expect((await mcpJson(s, ['remove', 'echo'])).json).toEqual({ ok: true, removed: 'echo' });
    const show = await mcpJson(s, ['show', 'echo']);
    expect(show.exitCode).toBe(3);
    expect(show.json).toMatchObject({ ok: false, error: { code: 'mcp.not_found' } });
    expect((await mcpJson(s, ['list'])).json).toEqual([]);
    const binding = await bindingFile(s, { allowed_tool_names: ['echo'] });
    const r = await s.run([dump, done()], { json: true, args: ['--binding', binding] });
    expect(list(reports(r.stdout)[0], 'resources.tools')).toEqual([]);
    expect((await mcpJson(s, ['remove', 'echo'])).exitCode).toBe(3);
  });

  it('AC-160 secrets in MCP config are masked in list, show, test, tools and --json', async () => {
    const s = await scenario();
    await s.lbot(['mcp', 'add', 'echo', '--env', 'API_TOKEN=tok-123456', '--', 'node', fixture('echo.js')]);
    const outputs = await Promise.all([
      s.lbot(['mcp', 'list']),
      s.lbot(['mcp', 'show', 'echo']),
      s.lbot(['--json', 'mcp', 'list']),
      s.lbot(['--json', 'mcp', 'show', 'echo']),
      s.lbot(['--json', 'mcp', 'test', 'echo']),
      s.lbot(['--json', 'mcp', 'tools']),
    ]);
    for (const o of outputs) {
      expect(o.exitCode).toBe(0);
      expect(`${o.stdout}${o.stderr}`).not.toContain('tok-1');
    }
    expect(outputs[3]?.stdout).toContain('"API_TOKEN":"****"');
  });

  it('AC-161 tool calls are bounded by the run deadline; the server serves the next run', async () => {
    const s = await scenario();
    await s.lbot(['mcp', 'add', 'echo', '--', 'node', fixture('echo.js')]);
    const binding = await bindingFile(s, { allowed_tool_names: ['echo', 'slow'] });
    const r = await s.run([api('tools.call', { tool_name: 'slow', parameters: { ms: 600_000 } }), done()], {
      json: true,
      config: { timeout: 3 },
      args: ['--binding', binding],
    });
    const call = reports(r.stdout)[0];
    // Whichever side notices the deadline first answers: the host's MCP call (details.phase tool_call) or the runner SDK's own bound.
    if (call) expect(call).toMatchObject({ ok: false, error: { code: 'deadline_exceeded' } });
    else {
      expect(r.exitCode).toBe(5);
      expect(errorOf(r.stdout)).toMatchObject({ code: 'runner.timeout' });
    }
    const next = await s.run([api('tools.call', { tool_name: 'echo', parameters: { text: 'again' } }), done()], { json: true, args: ['--binding', binding] });
    expect(next.exitCode).toBe(0);
    expect(JSON.stringify(reports(next.stdout)[0])).toContain('again');
  });
});

describe('box-hosted stdio servers', () => {
  it.skipIf(!BOX.usable)(
    withReason('run as a managed process in the box: staged project, test session removed, runs use mcp-shared', !BOX.usable && BOX.reason),
    async () => {
      const s = await scenario();
      const status = await s.lbot(['--json', 'box', 'status']);
      expect((JSON.parse(status.stdout || '{}') as { available?: boolean }).available, status.stdout + status.stderr).toBe(true);
      await s.writeConfig({ box: { allowed_mount_roots: [FIXTURES] } });
      await s.lbot(['mcp', 'add', 'boxed', '--in-box', '--', 'node', fixture('standalone-echo.js')]);
      const test = await mcpJson(s, ['test', 'boxed']);
      expect(test.json).toMatchObject({ status: 'connected', tools: ['echo'], box_session_id: expect.stringMatching(/^mcp-test-/) });
      const where = await mcpJson(s, ['call', 'boxed', 'where']);
      expect(JSON.stringify(where.json)).toMatch(/\/workspace\/\.mcp\/[^/]+\/workspace/);
      const binding = await bindingFile(s, { allowed_tool_names: ['echo'] });
      const r = await s.run([api('tools.call', { tool_name: 'echo', parameters: { text: 'from the box' } }), done()], {
        json: true,
        args: ['--binding', binding],
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.stringify(reports(r.stdout)[0])).toContain('from the box');
      const sessions = JSON.parse((await s.lbot(['--json', 'box', 'sessions'])).stdout) as Array<{ session_id: string; managed_processes: number }>;
      expect(sessions.map((x) => x.session_id).filter((id) => id.startsWith('mcp-test-'))).toEqual([]);
      // The run used the persistent mcp-shared session; its server stopped with the run.
      const shared = sessions.find((x) => x.session_id === 'mcp-shared');
      expect(shared, JSON.stringify(sessions)).toBeDefined();
      expect(shared?.managed_processes).toBe(0);
      await s.lbot(['box', 'rm', 'mcp-shared']);
    },
  );
});
