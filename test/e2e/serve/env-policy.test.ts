// `lbot serve` against a real process: an API caller cannot choose the environment, command or plugin
// set of a process. A binding in a POST /v1/runs body carrying NODE_OPTIONS (which would make the
// unsandboxed plugin process import attacker code) is refused and nothing runs; configured bindings
// are named by id; box exec and the native exec tool refuse loader variables with env.denied.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { boxBackend } from '../../helpers/box.js';
import { createTempPlugins, FIXTURE_EVENTS, type TempPlugins } from '../../helpers/plugins.js';
import { startServe, type ServeProcess } from '../../helpers/serve.js';
import { withReason } from '../../helpers/skip.js';

const SCRIPTED = 'plugin:acme/scripted/default';
const readEvent = async (name: string): Promise<Record<string, unknown>> =>
  JSON.parse(await readFile(path.join(FIXTURE_EVENTS, name), 'utf8')) as Record<string, unknown>;
const emit = (type: string, data: Record<string, unknown> = {}) => ({ emit: { type, data } });
const say = (text: string) => emit('message.completed', { message: { role: 'assistant', content: text } });
const api = (action: string, args: Record<string, unknown>) => ({ api: { action, args }, report: true });

/** NODE_OPTIONS that makes any node process it reaches write `marker` before its own code runs. */
const importWriting = (marker: string) => `--import=data:text/javascript,import('node:fs').then(f=>f.writeFileSync('${marker}','pwned'))`;

type Fixture = { dataDir: string; plugins: TempPlugins; serve?: ServeProcess; marker: string };
const open: Fixture[] = [];

async function setup(config?: Record<string, unknown>): Promise<Fixture> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-serve-env-'));
  const plugins = await createTempPlugins(['scripted']);
  if (config) await writeFile(path.join(dataDir, 'lbot.config.json'), JSON.stringify(config));
  const f: Fixture = { dataDir, plugins, marker: path.join(dataDir, 'pwned-marker') };
  open.push(f);
  return f;
}

async function serve(f: Fixture): Promise<ServeProcess> {
  f.serve = await startServe({ dataDir: f.dataDir, pluginsDir: f.plugins.pluginsDir });
  return f.serve;
}

/** Waits long enough for a spawned plugin process to have run its NODE_OPTIONS import. */
async function markerAfterGrace(marker: string, ms = 2000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (existsSync(marker)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return existsSync(marker);
}

afterEach(async () => {
  for (const f of open.splice(0)) {
    await f.serve?.stop('SIGKILL').catch(() => undefined);
    await rm(f.dataDir, { recursive: true, force: true });
    await f.plugins.cleanup();
  }
});

describe('POST /v1/runs does not let the caller choose a process env', () => {
  it('an inline binding with env NODE_OPTIONS (a data: URL import) is refused and the marker is never written', async () => {
    const f = await setup();
    const s = await serve(f);
    const event = await readEvent('msg.json');
    const r = await s.request('POST', '/v1/runs', {
      event,
      binding: { binding_id: 'evil', runner_id: SCRIPTED, env: { NODE_OPTIONS: importWriting(f.marker) } },
      config: { script: [say('hi'), emit('run.completed')] },
    });
    expect(r.status, r.text).toBe(400);
    expect(r.json).toMatchObject({ ok: false, error: { code: 'invalid_argument', details: { path: ['binding', 'env'] } } });
    expect(await markerAfterGrace(f.marker)).toBe(false);
    expect(s.stderr()).toContain('POST /v1/runs refused');
    // Same with ?wait=1, and bound_plugins (the plugin set) is refused the same way.
    const waited = await s.request('POST', '/v1/runs?wait=1', {
      event,
      binding: { binding_id: 'evil', runner_id: SCRIPTED, env: { NODE_OPTIONS: importWriting(f.marker) } },
    });
    expect(waited.status).toBe(400);
    const plugins = await s.request('POST', '/v1/runs', { event, binding: { binding_id: 'b', runner_id: SCRIPTED, bound_plugins: ['acme/scripted'] } });
    expect(plugins.status).toBe(400);
    expect(plugins.json).toMatchObject({ error: { code: 'invalid_argument', details: { path: ['binding', 'bound_plugins'] } } });
    // Unknown top-level fields are refused rather than ignored.
    const extra = await s.request('POST', '/v1/runs', { event, runner_id: SCRIPTED, env: { NODE_OPTIONS: importWriting(f.marker) } });
    expect(extra.status).toBe(400);
    expect(extra.json).toMatchObject({ error: { code: 'invalid_argument' } });
    expect(await markerAfterGrace(f.marker, 500)).toBe(false);
    const runs = (await s.request('GET', '/v1/runs')).json as { items: unknown[] };
    expect(runs.items).toEqual([]);
  });

  it('a data-only inline binding still runs, with an empty env', async () => {
    const f = await setup();
    const s = await serve(f);
    const r = await s.request('POST', '/v1/runs?wait=1', {
      event: await readEvent('msg.json'),
      binding: { binding_id: 'inline', runner_id: SCRIPTED, resource_policy: { allowed_tool_names: [] } },
      config: { script: [{ dump_env: true }, emit('run.completed')] },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ status: 'completed' });
    const record = (await s.request('GET', `/v1/runs/${String((r.json as { run_id: string }).run_id)}`)).json as {
      binding_id: string;
      results: Array<{ data?: { message?: { content?: string } } }>;
    };
    expect(record.binding_id).toBe('inline');
    const env = JSON.parse(record.results.find((x) => x.data?.message?.content?.startsWith('{'))?.data?.message?.content ?? '{}') as Record<string, string>;
    expect(env).not.toHaveProperty('NODE_OPTIONS');
  });

  it('binding_id names a configured binding, whose operator-set env the plugin gets', async () => {
    const f = await setup({
      bindings: [{ binding_id: 'configured', runner_id: SCRIPTED, scope: { scope_type: 'global', scope_id: null }, env: { GREETING: 'from-config' } }],
    });
    const s = await serve(f);
    const event = await readEvent('msg.json');
    const r = await s.request('POST', '/v1/runs?wait=1', { event, binding_id: 'configured', config: { script: [{ dump_env: true }, emit('run.completed')] } });
    expect(r.status, r.text).toBe(200);
    const record = (await s.request('GET', `/v1/runs/${String((r.json as { run_id: string }).run_id)}`)).json as {
      binding_id: string;
      results: Array<{ data?: { message?: { content?: string } } }>;
    };
    expect(record.binding_id).toBe('configured');
    expect(JSON.stringify(record.results)).toContain('from-config');
    const unknown = await s.request('POST', '/v1/runs', { event, binding_id: 'nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ error: { code: 'binding.not_found' } });
    const other = await s.request('POST', '/v1/runs', { event, binding_id: 'configured', runner_id: 'plugin:acme/other/default' });
    expect(other.status).toBe(400);
  });
});

describe('POST /v1/box/exec', () => {
  it('refuses env LD_PRELOAD with 403 env.denied and records it in the box error log', async () => {
    const f = await setup({ box: { workspace_quota_mb: 0 } });
    const s = await serve(f);
    const r = await s.request('POST', '/v1/box/exec', { cmd: `touch ${f.marker}`, env: { LD_PRELOAD: '/tmp/evil.so' } });
    expect(r.status, r.text).toBe(403);
    expect(r.json).toMatchObject({ ok: false, error: { code: 'env.denied', details: { variables: ['LD_PRELOAD'] } } });
    expect(s.stderr()).toContain('POST /v1/box/exec refused');
    const status = (await s.request('GET', '/v1/box/status')).json as { recent_error_count: number };
    expect(status.recent_error_count).toBeGreaterThanOrEqual(1);
    expect(existsSync(f.marker)).toBe(false);
  });
});

const box = boxBackend();
if (!box.usable) console.warn(`native exec tool env test skipped: ${box.reason}`);

describe.skipIf(!box.usable)(withReason('the native exec tool in a served run', !box.usable && box.reason), () => {
  it('refuses env LD_PRELOAD: the runner gets env.denied and the command never runs', async () => {
    const f = await setup({
      box: { workspace_quota_mb: 0 },
      bindings: [
        { binding_id: 'tools', runner_id: SCRIPTED, scope: { scope_type: 'global', scope_id: null }, resource_policy: { allowed_tool_names: ['exec'] } },
      ],
    });
    const s = await serve(f);
    const script = [
      api('tools.call', { tool_name: 'exec', parameters: { command: 'echo ran > /workspace/ran', env: { LD_PRELOAD: '/workspace/evil.so' } } }),
      api('tools.call', { tool_name: 'exec', parameters: { command: 'ls /workspace', env: { GREETING: 'hi' } } }),
      emit('run.completed'),
    ];
    const r = await s.request('POST', '/v1/runs?wait=1', { event: await readEvent('msg.json'), binding_id: 'tools', config: { script } });
    expect(r.status, r.text).toBe(200);
    const runId = String((r.json as { run_id: string }).run_id);
    const record = (await s.request('GET', `/v1/runs/${runId}`)).json as {
      results: Array<{ data?: { message?: { content?: string } } }>;
      api_calls: Array<{ action: string; decision: string; code: string | null }>;
    };
    const [refused, listing] = record.results
      .map((x) => x.data?.message?.content ?? '')
      .filter((t) => t.startsWith('{'))
      .map((t) => JSON.parse(t) as Record<string, unknown>);
    expect(refused).toMatchObject({
      ok: false,
      error: { code: 'invalid_argument', details: { reason: 'env_denied', error_code: 'env.denied', variables: ['LD_PRELOAD'] } },
    });
    expect(listing).toMatchObject({ ok: true, result: { result: { exit_code: 0 } } });
    expect(JSON.stringify(listing)).not.toContain('ran');
    expect(record.api_calls).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'tools.call', decision: 'denied', code: 'invalid_argument' })]));
    await s.request('DELETE', '/v1/box/sessions/conversation_c1');
  });
});
