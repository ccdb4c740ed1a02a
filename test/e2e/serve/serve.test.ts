// `lbot serve` against a real process: AC-173, AC-174, AC-175, AC-200, AC-213, AC-214, and the
// [serve] scenarios AC-028, AC-029 and AC-198 (plugin restarted after a protocol error).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempPlugins, FIXTURE_EVENTS, type TempPlugins } from '../../helpers/plugins.js';
import { LBOT_BIN, startServe, type ServeProcess } from '../../helpers/serve.js';
import { boxBackend } from '../../helpers/box.js';
import { withReason } from '../../helpers/skip.js';

const SCRIPTED = 'plugin:acme/scripted/default';
/** Whether a box backend works here (the /v1/box/* checks need one). */
const BOX = boxBackend();
const readEvent = async (name: string): Promise<Record<string, unknown>> =>
  JSON.parse(await readFile(path.join(FIXTURE_EVENTS, name), 'utf8')) as Record<string, unknown>;
const emit = (type: string, data: Record<string, unknown> = {}) => ({ emit: { type, data } });
const say = (text: string) => emit('message.completed', { message: { role: 'assistant', content: text } });

type Fixture = { dataDir: string; plugins: TempPlugins; serve?: ServeProcess };
const open: Fixture[] = [];

async function setup(fixtures: string[] = ['scripted'], config?: Record<string, unknown>): Promise<Fixture> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-serve-'));
  const plugins = await createTempPlugins(fixtures);
  if (config) await writeFile(path.join(dataDir, 'lbot.config.json'), JSON.stringify(config));
  const f: Fixture = { dataDir, plugins };
  open.push(f);
  return f;
}

async function serve(f: Fixture, env?: Record<string, string>): Promise<ServeProcess> {
  f.serve = await startServe({ dataDir: f.dataDir, pluginsDir: f.plugins.pluginsDir, ...(env ? { env } : {}) });
  return f.serve;
}

/** Processes whose command line mentions `needle` (pgrep -f), excluding this test process. */
async function processesMatching(needle: string): Promise<string[]> {
  const r = await execa('pgrep', ['-f', needle], { reject: false });
  return r.stdout.split('\n').filter((l) => l.trim() !== '');
}

/** SIGKILL, where a process that ended between listing and killing (ESRCH) is already what the test wants. */
function killIfAlive(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'ESRCH')) throw err;
  }
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

afterEach(async () => {
  for (const f of open.splice(0)) {
    await f.serve?.stop('SIGKILL').catch(() => undefined);
    await rm(f.dataDir, { recursive: true, force: true });
    await f.plugins.cleanup();
  }
});

describe('lbot serve', () => {
  it('AC-173 headless serve: healthz, POST /v1/runs, run record, NDJSON results, shared data dir', async () => {
    const f = await setup();
    const s = await serve(f);
    expect(new URL(s.url).hostname).toBe('127.0.0.1');
    const health = await fetch(`${s.url}/healthz`);
    expect(health.status).toBe(200);
    const started = await s.request('POST', '/v1/runs', {
      event: await readEvent('msg.json'),
      runner_id: SCRIPTED,
      config: { script: [say('pong'), emit('run.completed')] },
    });
    expect(started.status).toBe(202);
    const runId = (started.json as { run_id: string }).run_id;
    const record = await s.waitRun(runId);
    expect(record.status).toBe('completed');
    const results = await s.request('GET', `/v1/runs/${runId}/results`);
    const lines = results.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.type)).toEqual(['message.completed', 'run.summary']);
    expect(lines[0]).toMatchObject({ data: { message: { content: 'pong' } } });
    const list = await execa(process.execPath, [LBOT_BIN, '--data-dir', f.dataDir, 'runs', 'list', '--json']);
    expect(list.stdout).toContain(runId);
  });

  it('what serve answered survives kill -9 right after the answer (group commit commits before answering)', async () => {
    const f = await setup();
    // A window far longer than the test: the answer's own commit is what makes the run durable.
    const s = await serve(f, { LBOT__SERVE__COMMIT_WINDOW_MS: '1000' });
    const event = { ...(await readEvent('msg.json')), event_id: 'evt-kill-9', conversation_id: 'conv-kill-9' };
    const answered = await s.request('POST', '/v1/runs?wait=1', { event, runner_id: SCRIPTED, config: { script: [say('kept'), emit('run.completed')] } });
    expect(answered.json).toMatchObject({ status: 'completed' });
    const runId = (answered.json as { run_id: string }).run_id;
    await s.stop('SIGKILL');
    const shown = await execa(process.execPath, [LBOT_BIN, '--data-dir', f.dataDir, 'runs', 'show', runId, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ run_id: runId, status: 'completed' });
    const history = await execa(process.execPath, [LBOT_BIN, '--data-dir', f.dataDir, 'transcript', 'page', '--conversation', 'conv-kill-9', '--json']);
    expect(history.stdout).toContain('kept');
  });

  it('AC-173 results stream live as Server-Sent Events while the run is going', async () => {
    const f = await setup();
    const s = await serve(f);
    const started = await s.request('POST', '/v1/runs', {
      event: await readEvent('msg.json'),
      runner_id: SCRIPTED,
      config: { script: [emit('message.delta', { chunk: { role: 'assistant', content: 'he' } }), { sleep_ms: 300 }, say('hello'), emit('run.completed')] },
    });
    const runId = (started.json as { run_id: string }).run_id;
    const res = await fetch(`${s.url}/v1/runs/${runId}/results`, { headers: { authorization: `Bearer ${s.token}`, accept: 'text/event-stream' } });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const body = await res.text();
    const events = [...body.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(events).toEqual(['message.delta', 'message.completed', 'run.summary']);
  });

  it('AC-174 bindings route events; no binding gives 404 binding.not_found and the event is still logged', async () => {
    const f = await setup(['scripted'], {
      bindings: [
        {
          binding_id: 'joins',
          runner_id: SCRIPTED,
          event_types: ['group.member_joined'],
          scope: { scope_type: 'global', scope_id: null },
          runner_config: { script: [say('welcome'), emit('run.completed')] },
        },
      ],
    });
    const s = await serve(f);
    const routed = await s.request('POST', '/v1/events', await readEvent('join.json'));
    expect(routed.status).toBe(202);
    const ids = (routed.json as { run_ids: string[] }).run_ids;
    expect(ids).toHaveLength(1);
    const record = await s.waitRun(ids[0] ?? '');
    expect(record).toMatchObject({ status: 'completed', binding_id: 'joins' });
    const unrouted = await s.request('POST', '/v1/events', await readEvent('friend.json'));
    expect(unrouted.status).toBe(404);
    expect(unrouted.json).toMatchObject({ ok: false, error: { code: 'binding.not_found' } });
    const friend = await readEvent('friend.json');
    const logged = await s.request('GET', `/v1/events/${String(friend.event_id)}`);
    expect(logged.status).toBe(200);
    expect(logged.json).toMatchObject({ event_type: 'friend.request_received', run_id: null });
  });

  it('AC-175 SIGTERM cancels the run in flight and leaves no runner process', async () => {
    const f = await setup();
    const s = await serve(f);
    const started = await s.request('POST', '/v1/runs', { event: await readEvent('msg.json'), runner_id: SCRIPTED, config: { script: [{ sleep_ms: 60000 }] } });
    const runId = (started.json as { run_id: string }).run_id;
    expect(await waitFor(async () => (await processesMatching(f.plugins.pluginsDir)).length > 0)).toBe(true);
    const t0 = Date.now();
    const { exitCode } = await s.stop('SIGTERM');
    expect(exitCode).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const show = await execa(process.execPath, [LBOT_BIN, '--data-dir', f.dataDir, 'runs', 'show', runId, '--json']);
    expect(JSON.parse(show.stdout)).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
    expect(await processesMatching(f.plugins.pluginsDir)).toEqual([]);
  });

  it('AC-200 a crashed plugin fails only its runs, restarts for the next run, and crash loops back off', async () => {
    // A wide restart window, so that a slow machine still makes its six starts inside it.
    const f = await setup(['scripted'], { plugins: { restart_limit: { starts: 5, window_ms: 120_000 } } });
    await f.plugins.add('scripted', 'other');
    await f.plugins.editYaml('other', 'manifest.yaml', (doc) => {
      (doc.metadata as Record<string, unknown>).name = 'other';
    });
    const s = await serve(f);
    const msg = await readEvent('msg.json');
    const a = await s.request('POST', '/v1/runs', {
      event: msg,
      runner_id: SCRIPTED,
      config: { script: [{ api: { action: 'state.get', args: { scope: 'conversation', key: 'k' } } }, { sleep_ms: 60000 }] },
    });
    const aId = (a.json as { run_id: string }).run_id;
    const b = await s.request('POST', '/v1/runs', {
      event: msg,
      runner_id: 'plugin:acme/other/default',
      config: { script: [{ sleep_ms: 800 }, say('b done'), emit('run.completed')] },
    });
    const aPids = async () => processesMatching(path.join(f.plugins.pluginsDir, 'scripted', 'main.js'));
    // The run is inside the runner once its first API call is audited.
    expect(await waitFor(async () => ((await s.request('GET', `/v1/runs/${aId}`)).json as { api_calls: unknown[] }).api_calls.length > 0)).toBe(true);
    for (const pid of await aPids()) killIfAlive(Number(pid));
    const aRec = await s.waitRun(aId);
    expect(aRec).toMatchObject({ status: 'failed', error: { code: 'runner.crashed' } });
    expect(await s.waitRun((b.json as { run_id: string }).run_id)).toMatchObject({ status: 'completed' });
    const again = await s.request('POST', '/v1/runs', { event: msg, runner_id: SCRIPTED, config: { script: [say('back'), emit('run.completed')] } });
    expect(await s.waitRun((again.json as { run_id: string }).run_id)).toMatchObject({ status: 'completed' });
    // Each run below kills its plugin process at once: the sixth start within the window backs off (and
    // waits out the window, so the test stops at the warning).
    const backingOff = () => /restarted 5 times in 120s; backing off/.test(s.stderr());
    for (let i = 0; i < 5 && !backingOff(); i++) {
      const crash = await s.request('POST', '/v1/runs', { event: msg, runner_id: SCRIPTED, config: { script: [{ exit: 1 }] } });
      const crashId = (crash.json as { run_id: string }).run_id;
      const ended = async () => ['completed', 'failed'].includes(((await s.request('GET', `/v1/runs/${crashId}`)).json as { status?: string }).status ?? '');
      expect(await waitFor(async () => backingOff() || (await ended()), 30_000)).toBe(true);
      if (!backingOff()) expect(await s.waitRun(crashId)).toMatchObject({ error: { code: 'runner.crashed' } });
    }
    expect(s.stderr()).toMatch(/restarted 5 times in 120s; backing off/);
  }, 60_000);

  it('AC-198 under serve a protocol error restarts the plugin for the next run', async () => {
    const f = await setup();
    const s = await serve(f);
    const msg = await readEvent('msg.json');
    const bad = await s.request('POST', '/v1/runs', {
      event: msg,
      runner_id: SCRIPTED,
      config: { script: [{ emit_raw: 'hello world' }, say('x'), emit('run.completed')] },
    });
    expect(await s.waitRun((bad.json as { run_id: string }).run_id)).toMatchObject({ status: 'failed', error: { code: 'runner.protocol_error' } });
    const good = await s.request('POST', '/v1/runs', { event: msg, runner_id: SCRIPTED, config: { script: [say('ok'), emit('run.completed')] } });
    expect(await s.waitRun((good.json as { run_id: string }).run_id)).toMatchObject({ status: 'completed' });
  });

  it('AC-028 calls after the terminal result are refused and audited', async () => {
    const f = await setup();
    const s = await serve(f);
    const started = await s.request('POST', '/v1/runs', {
      event: await readEvent('msg.json'),
      runner_id: SCRIPTED,
      config: {
        script: [
          say('done'),
          emit('run.completed'),
          { sleep_ms: 200 },
          { api: { action: 'state.set', args: { scope: 'conversation', key: 'late', value: 1 } } },
        ],
      },
    });
    const runId = (started.json as { run_id: string }).run_id;
    await s.waitRun(runId);
    const denied = await waitFor(async () => {
      const rec = (await s.request('GET', `/v1/runs/${runId}`)).json as { api_calls: Array<Record<string, unknown>> };
      return rec.api_calls.some((c) => c.action === 'state.set' && c.decision === 'denied' && c.code === 'unauthorized');
    }, 5000);
    expect(denied).toBe(true);
  });

  it("AC-029 a plugin cannot use another plugin's run id", async () => {
    const f = await setup(['scripted']);
    await f.plugins.add('scripted', 'b');
    await f.plugins.editYaml('b', 'manifest.yaml', (doc) => {
      (doc.metadata as Record<string, unknown>).name = 'b';
    });
    const s = await serve(f);
    const msg = await readEvent('msg.json');
    const a = await s.request('POST', '/v1/runs', {
      event: msg,
      runner_id: SCRIPTED,
      config: { script: [{ sleep_ms: 1500 }, say('a done'), emit('run.completed')] },
    });
    const aId = (a.json as { run_id: string }).run_id;
    const b = await s.request('POST', '/v1/runs', {
      event: msg,
      runner_id: 'plugin:acme/b/default',
      config: { script: [{ api: { action: 'history.page', args: {} }, as_run_id: aId, report: true }, emit('run.completed')] },
    });
    const bId = (b.json as { run_id: string }).run_id;
    const bRec = (await s.waitRun(bId)) as { api_calls: Array<Record<string, unknown>> };
    const results = (await s.request('GET', `/v1/runs/${bId}/results`)).text;
    expect(results).toContain('unauthorized');
    expect(bRec.api_calls).toContainEqual(
      expect.objectContaining({ action: 'history.page', decision: 'denied', code: 'unauthorized', caller_plugin: 'acme/b' }),
    );
    expect(await s.waitRun(aId)).toMatchObject({ status: 'completed' });
  });

  it('AC-213 exposure: loopback by default, non-loopback needs a token, 401 without the right token, quiet healthz', async () => {
    const f = await setup();
    const refused = await execa(process.execPath, [LBOT_BIN, '--data-dir', f.dataDir, 'serve', '--host', '0.0.0.0', '--port', '0'], {
      reject: false,
      env: { LBOT_API_TOKEN: '' },
    });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('LBOT_API_TOKEN');
    const s = await serve(f);
    const noAuth = await fetch(`${s.url}/v1/runs`);
    expect(noAuth.status).toBe(401);
    const wrong = await fetch(`${s.url}/v1/runs`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    const health = await (await fetch(`${s.url}/healthz`)).text();
    expect(health).not.toMatch(/version|0\.1\.0|config|plugins/i);
    const mode = (await import('node:fs')).statSync(path.join(f.dataDir, 'serve.token')).mode & 0o777;
    expect(mode).toBe(0o600);
  });

  it('AC-214 no code-evaluation surface: debug paths answer 404 with and without a token', async () => {
    const f = await setup();
    const s = await serve(f);
    for (const route of ['/debug/exec', '/api/v1/system/debug/exec', '/v1/debug/eval']) {
      const withToken = await s.request('POST', route, { code: 'process.exit(1)' });
      expect(withToken.status).toBe(404);
      const without = await fetch(`${s.url}${route}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      expect(without.status).toBe(404);
    }
  });

  it('webhooks: a Slack url_verification is answered and a Telegram update is routed through the bindings', async () => {
    const f = await setup(['scripted'], {
      bindings: [
        {
          binding_id: 'tg',
          runner_id: SCRIPTED,
          event_types: ['message.received'],
          scope: { scope_type: 'global', scope_id: null },
          runner_config: { script: [say('hi'), emit('run.completed')] },
        },
      ],
    });
    const s = await serve(f);
    const challenge = await s.request('POST', '/v1/webhooks/slack', { type: 'url_verification', token: 't', challenge: 'abc123' });
    expect(challenge.status).toBe(200);
    expect(challenge.json).toMatchObject({ challenge: 'abc123' });
    const update = JSON.parse(await readFile(path.join(FIXTURE_EVENTS, '..', 'platform', 'telegram', 'text.nutgram.json'), 'utf8')) as unknown;
    const routed = await s.request('POST', '/v1/webhooks/telegram?bot_id=tg-bot', update);
    expect(routed.status).toBe(202);
    const runId = (routed.json as { run_ids: string[] }).run_ids[0] ?? '';
    expect(await s.waitRun(runId)).toMatchObject({ status: 'completed' });
    const logged = (await s.request('GET', `/v1/events?limit=1`)).json as { items: Array<{ bot_id: string | null; source: string }> };
    expect(logged.items[0]).toMatchObject({ bot_id: 'tg-bot', source: 'platform' });
    const again = await s.request('POST', '/v1/webhooks/telegram?bot_id=tg-bot', update);
    expect(again.json).toMatchObject({ duplicate: true });
    const malformed = await s.request('POST', '/v1/webhooks/telegram', { update_id: 'x' });
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ error: { code: 'event.invalid' } });
  });

  it('skill and MCP endpoints mirror the CLI; AC-113 serve starts with the box disabled', async () => {
    const f = await setup();
    const s = await serve(f);
    expect((await s.request('GET', '/v1/skills')).json).toEqual({ skills: [] });
    expect((await s.request('GET', '/v1/mcp/servers')).json).toMatchObject({ servers: [] });
    expect((await s.request('GET', '/v1/skills/nope')).status).toBe(404);
    await s.stop();
    const g = await setup();
    const off = await serve(g, { LBOT__BOX__ENABLED: 'false' });
    const refused = await off.request('POST', '/v1/box/exec', { cmd: 'true' });
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({ error: { code: 'box.unavailable', details: { reason: 'disabled' } } });
  });

  it.skipIf(!BOX.usable)(withReason('/v1/box/* endpoints mirror the CLI: exec, sessions, remove', !BOX.usable && BOX.reason), async () => {
    const f = await setup();
    const s = await serve(f);
    const exec = await s.request('POST', '/v1/box/exec', { cmd: 'echo hi; exit 3', session_id: 'http1' });
    expect(exec.status).toBe(200);
    expect(exec.json).toMatchObject({ status: 'completed', exit_code: 3, stdout: 'hi\n', session_id: 'http1' });
    expect(JSON.stringify((await s.request('GET', '/v1/box/sessions')).json)).toContain('http1');
    expect((await s.request('DELETE', '/v1/box/sessions/http1')).status).toBe(200);
    expect((await s.request('DELETE', '/v1/box/sessions/http1')).status).toBe(404);
    await s.stop();
  });

  it('webhooks with a configured verifier need no bearer token, and refuse bad signatures', async () => {
    const { createHmac, generateKeyPairSync, sign } = await import('node:crypto');
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const publicHex = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
    const f = await setup(['scripted'], {
      serve: { webhooks: { slack: { signing_secret: 'shh' }, telegram: { secret_token: 'tg-secret' }, discord: { public_key: publicHex } } },
      bindings: [
        {
          binding_id: 'all',
          runner_id: SCRIPTED,
          event_types: ['message.received'],
          scope: { scope_type: 'global', scope_id: null },
          runner_config: { script: [say('hi'), emit('run.completed')] },
        },
      ],
    });
    const s = await serve(f);
    const post = (route: string, body: string, headers: Record<string, string>) =>
      fetch(`${s.url}${route}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
    const slackBody = JSON.stringify({ type: 'url_verification', token: 't', challenge: 'c-42' });
    const ts = String(Math.floor(Date.now() / 1000));
    const slackSig = `v0=${createHmac('sha256', 'shh').update(`v0:${ts}:${slackBody}`).digest('hex')}`;
    const ok = await post('/v1/webhooks/slack', slackBody, { 'x-slack-request-timestamp': ts, 'x-slack-signature': slackSig });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ challenge: 'c-42' });
    const forged = await post('/v1/webhooks/slack', slackBody, { 'x-slack-request-timestamp': ts, 'x-slack-signature': 'v0=00' });
    expect(forged.status).toBe(401);
    const stale = await post('/v1/webhooks/slack', slackBody, { 'x-slack-request-timestamp': String(Number(ts) - 3600), 'x-slack-signature': slackSig });
    expect(stale.status).toBe(401);

    const update = await readFile(path.join(FIXTURE_EVENTS, '..', 'platform', 'telegram', 'text.nutgram.json'), 'utf8');
    expect((await post('/v1/webhooks/telegram', update, {})).status).toBe(401);
    const routed = await post('/v1/webhooks/telegram', update, { 'x-telegram-bot-api-secret-token': 'tg-secret' });
    expect(routed.status).toBe(202);

    const ping = JSON.stringify({ type: 1, id: '1', application_id: '2', token: 'x', version: 1 });
    const dts = String(Math.floor(Date.now() / 1000));
    const dsig = sign(null, Buffer.from(dts + ping), privateKey).toString('hex');
    const pong = await post('/v1/webhooks/discord', ping, { 'x-signature-ed25519': dsig, 'x-signature-timestamp': dts });
    expect(pong.status).toBe(200);
    const badSig = await post('/v1/webhooks/discord', ping, { 'x-signature-ed25519': '0'.repeat(128), 'x-signature-timestamp': dts });
    expect(badSig.status).toBe(401);
    // Platforms without a verifier still need the bearer token.
    expect((await post('/v1/webhooks/onebot', '{}', {})).status).toBe(401);
  });
});
