// `lbot serve --discord-gateway`: a MESSAGE_CREATE from a local fake Discord gateway (which checks the
// opcodes) starts a run whose reply goes to the fake Discord REST API as a reply to the message.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeDiscord } from '../../helpers/fake-platforms.js';
import { messageCreate, startFakeGateway } from '../../helpers/fake-discord-gateway.js';
import { createTempPlugins } from '../../helpers/plugins.js';
import { LBOT_BIN, startServe } from '../../helpers/serve.js';

const TOKEN = 'discord-e2e-token';
const cleanup: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

describe('lbot serve --discord-gateway', () => {
  it('a message over the gateway is answered in its channel, as a reply; SIGTERM ends the gateway session', async () => {
    const rest = await fakeDiscord(TOKEN);
    cleanup.push(() => rest.close());
    const gw = await startFakeGateway({ token: TOKEN, restUrl: rest.url, heartbeatMs: 1000 });
    cleanup.push(() => gw.close());
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-dcgw-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const plugins = await createTempPlugins(['scripted']);
    cleanup.push(() => plugins.cleanup());
    const script = [
      { emit: { type: 'message.completed', data: { message: { role: 'assistant', content: 'hi from the gateway' } } } },
      { emit: { type: 'run.completed', data: {} } },
    ];
    await writeFile(
      path.join(dataDir, 'lbot.config.json'),
      JSON.stringify({
        platforms: [{ name: 'dc', platform: 'discord', token_env: 'DC_TOKEN', api_base: gw.apiBase }],
        bindings: [{ binding_id: 'dc-reply', runner_id: 'plugin:acme/scripted/default', runner_config: { script } }],
      }),
    );
    const s = await startServe({ dataDir, pluginsDir: plugins.pluginsDir, env: { DC_TOKEN: TOKEN }, args: ['--discord-gateway'] });
    cleanup.push(() => s.stop('SIGKILL'));
    await expect.poll(() => gw.received.some((r) => r.op === 2), { timeout: 20_000, interval: 50 }).toBe(true);
    gw.dispatch('MESSAGE_CREATE', messageCreate('1600000000000000101', 'hello over the gateway'));
    await expect.poll(() => rest.sent.length, { timeout: 20_000, interval: 50 }).toBe(1);
    expect(rest.sent[0]).toMatchObject({
      path: '/api/v10/channels/1400000000000000001/messages',
      body: { content: 'hi from the gateway', message_reference: { message_id: '1600000000000000101' } },
    });
    const runs = (await s.request('GET', '/v1/runs')).json as { items: Array<Record<string, unknown>> };
    expect(runs.items).toHaveLength(1);
    expect(gw.violations).toEqual([]);
    await s.stop('SIGTERM');
    // A 1000 close ends the session on Discord's side (the bot goes offline at once).
    await expect.poll(() => gw.closes, { timeout: 10_000, interval: 20 }).toEqual([1000]);
    expect(s.stderr()).not.toContain(TOKEN);
  });

  it('refuses to start without a discord account', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-dcgw-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const r = await execa(process.execPath, [LBOT_BIN, '--data-dir', dataDir, 'serve', '--port', '0', '--discord-gateway'], { reject: false });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('no discord platform account');
  });
});
