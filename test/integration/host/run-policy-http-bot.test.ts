// HTTP-bot messages under run_policy enqueue through a real in-process `lbot serve`: a message of a busy
// session waits its turn; when that queued run is cancelled before it starts, its idempotency key is
// released, so the backend's retry of the same message is taken (and runs) instead of a 409 duplicate.
import { createHmac } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunOutcome } from '../../../src/core/host/host.js';
import { openConfigFile } from '../../../src/core/stores/config-file.js';
import { startServe, type ServeHandle } from '../../../src/runtime/server/serve.js';
import { createTempPlugins, type TempPlugins } from '../../helpers/plugins.js';

const TOKEN = 't'.repeat(40);
const SECRET = 'http-bot-signing-secret';
const SCRIPTED = 'plugin:acme/scripted/default';
const sign = (ts: string, body: string) => `sha256=${createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex')}`;

let plugins: TempPlugins;
let dataDir: string;
let gates: string;
let serve: ServeHandle;
const outcomes = new Map<string, RunOutcome>();

beforeAll(async () => {
  plugins = await createTempPlugins(['scripted']);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-policy-bot-'));
  gates = path.join(plugins.dir('scripted'), 'gates');
  await mkdir(gates);
  const script = [
    { wait_file: path.join(gates, '{event_id}') },
    { emit: { type: 'message.completed', data: { message: { role: 'assistant', content: 'done' } } } },
    { emit: { type: 'run.completed', data: {} } },
  ];
  const config = {
    // Replies go to a closed port: delivery is not under test here.
    platforms: [{ name: 'desk', platform: 'http', token_env: 'HB_SECRET', api_base: 'http://127.0.0.1:9/lbot-callback' }],
    bindings: [{ binding_id: 'desk-reply', runner_id: SCRIPTED, runner_config: { script } }],
  };
  await writeFile(path.join(dataDir, 'lbot.config.json'), JSON.stringify(config));
  serve = await startServe({
    dataDir,
    pluginsDir: plugins.pluginsDir,
    configFile: openConfigFile(dataDir, {}),
    port: 0,
    env: { LBOT_API_TOKEN: TOKEN, HB_SECRET: SECRET },
    warn: () => undefined,
    hostHooks: { observer: { onRunEnded: (o) => outcomes.set(o.run_id, o) } },
  });
}, 60_000);

afterAll(async () => {
  await serve?.close();
  await plugins?.cleanup();
  await rm(dataDir, { recursive: true, force: true });
});

async function message(body: Record<string, unknown>, key: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const text = JSON.stringify(body);
  const ts = String(Math.floor(Date.now() / 1000));
  const res = await fetch(`${serve.url}/bots/desk`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-langbot-timestamp': ts, 'x-langbot-signature': sign(ts, text), 'idempotency-key': key },
    body: text,
  });
  return { status: res.status, json: { ...((await res.json()) as Record<string, unknown>) } };
}

async function until(what: string, check: () => boolean): Promise<void> {
  const end = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('http bot under run_policy enqueue', () => {
  it('a queued message cancelled before it starts releases its idempotency key; the retry runs', async () => {
    const first = await message({ session_id: 'ticket-1', message: 'one' }, 'k-1');
    expect(first.status).toBe(202);
    const queued = await message({ session_id: 'ticket-1', message: 'two' }, 'k-2');
    expect(queued.status).toBe(202);
    const queuedRun = String(queued.json.run_id);
    expect(serve.runs.queued(queuedRun)).toMatchObject({ status: 'queued', queue: { ahead: first.json.run_id } });
    // While it waits, the key is taken: a repeat is a duplicate.
    expect((await message({ session_id: 'ticket-1', message: 'two' }, 'k-2')).status).toBe(409);
    const ended = serve.runs.outcome(queuedRun);
    expect(serve.runs.cancel(queuedRun)).toBe(true);
    expect(await ended).toMatchObject({ status: 'cancelled', error: { details: { never_started: true } } });
    // The backend's retry of the cancelled message is taken and waits its turn again.
    const retry = await message({ session_id: 'ticket-1', message: 'two' }, 'k-2');
    expect(retry.status, JSON.stringify(retry.json)).toBe(202);
    await writeFile(path.join(gates, String(first.json.event_id)), '');
    await writeFile(path.join(gates, String(retry.json.event_id)), '');
    await until('both runs to end', () => outcomes.has(String(first.json.run_id)) && outcomes.has(String(retry.json.run_id)));
    expect(outcomes.get(String(retry.json.run_id))?.status).toBe('completed');
    expect(outcomes.has(queuedRun)).toBe(false);
  });
});
