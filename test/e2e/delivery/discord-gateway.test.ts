// Discord through a real `lbot serve`: a MESSAGE_CREATE from a local fake Discord gateway (which checks
// the opcodes, --discord-gateway) starts a run whose reply goes to the fake Discord REST API as a reply
// to the message; an HTTP interaction is deferred at once and answered on its interaction webhook.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeDiscord } from '../../helpers/fake-platforms.js';
import { messageCreate, startFakeGateway, type FakeGateway } from '../../helpers/fake-discord-gateway.js';
import { createTempPlugins } from '../../helpers/plugins.js';
import { LBOT_BIN, startServe, type ServeProcess } from '../../helpers/serve.js';

const TOKEN = 'discord-e2e-token';
const cleanup: Array<() => Promise<unknown>> = [];
let rest: Awaited<ReturnType<typeof fakeDiscord>>;
let gw: FakeGateway;
let s: ServeProcess;

beforeAll(async () => {
  rest = await fakeDiscord(TOKEN);
  cleanup.push(() => rest.close());
  gw = await startFakeGateway({ token: TOKEN, restUrl: rest.url, heartbeatMs: 1000 });
  cleanup.push(() => gw.close());
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-dcgw-'));
  cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
  const plugins = await createTempPlugins(['scripted']);
  cleanup.push(() => plugins.cleanup());
  const script = [
    { emit: { type: 'message.completed', data: { message: { role: 'assistant', content: 'hi from lbot' } } } },
    { emit: { type: 'message.completed', data: { message: { role: 'assistant', content: 'and a second message' } } } },
    { emit: { type: 'run.completed', data: {} } },
  ];
  await writeFile(
    path.join(dataDir, 'lbot.config.json'),
    JSON.stringify({
      platforms: [{ name: 'dc', platform: 'discord', token_env: 'DC_TOKEN', api_base: gw.apiBase }],
      bindings: [
        {
          binding_id: 'dc-reply',
          runner_id: 'plugin:acme/scripted/default',
          event_types: ['message.received', 'interaction.invoked'],
          runner_config: { script },
        },
      ],
    }),
  );
  s = await startServe({ dataDir, pluginsDir: plugins.pluginsDir, env: { DC_TOKEN: TOKEN }, args: ['--discord-gateway'] });
  cleanup.push(() => s.stop('SIGKILL'));
}, 60_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

describe('Discord through lbot serve', () => {
  it('--discord-gateway: a message over the gateway is answered in its channel, as a reply', async () => {
    await expect.poll(() => gw.received.some((r) => r.op === 2), { timeout: 20_000, interval: 50 }).toBe(true);
    gw.dispatch('MESSAGE_CREATE', messageCreate('1600000000000000101', 'hello over the gateway'));
    await expect.poll(() => rest.sent.length, { timeout: 20_000, interval: 50 }).toBe(2);
    expect(rest.sent.map((m) => [m.path, m.body.content, m.body.message_reference])).toEqual([
      ['/api/v10/channels/1400000000000000001/messages', 'hi from lbot', { message_id: '1600000000000000101', fail_if_not_exists: false }],
      ['/api/v10/channels/1400000000000000001/messages', 'and a second message', { message_id: '1600000000000000101', fail_if_not_exists: false }],
    ]);
    expect(gw.violations).toEqual([]);
  });

  it('an HTTP interaction is deferred (type 5); the first reply edits the deferred response, the next follows up', async () => {
    const interaction = {
      ...(JSON.parse(
        readFileSync(new URL('../../../fixtures/platform/discord/interaction.slash_command.discord-docs.json', import.meta.url), 'utf8'),
      ) as Record<string, unknown>),
      application_id: '1800000000000000001',
      token: 'interaction-token-abc',
    };
    rest.allowInteraction('1800000000000000001', 'interaction-token-abc');
    const before = rest.sent.length;
    const r = await s.request('POST', '/v1/webhooks/discord?bot_id=discord:dc', interaction);
    expect(r).toMatchObject({ status: 200, json: { type: 5 } });
    await expect.poll(() => rest.sent.length - before, { timeout: 20_000, interval: 50 }).toBe(2);
    const hook = '/api/v10/webhooks/1800000000000000001/interaction-token-abc';
    expect(rest.sent.slice(before).map((m) => [m.method, m.path, m.body.content])).toEqual([
      ['PATCH', `${hook}/messages/@original`, 'hi from lbot'],
      ['POST', `${hook}?wait=true`, 'and a second message'],
    ]);
    // The interaction token is a credential: masked wherever the outbox is shown.
    const outbox = await s.request('GET', '/v1/outbox?status=delivered');
    expect(outbox.text).not.toContain('interaction-token-abc');
    expect(outbox.text).toContain('"interaction_token":"****"');
  });

  it('SIGTERM ends the gateway session with a 1000 close', async () => {
    await s.stop('SIGTERM');
    await expect.poll(() => gw.closes, { timeout: 10_000, interval: 20 }).toEqual([1000]);
    expect(s.stderr()).not.toContain(TOKEN);
  });

  it('--discord-gateway refuses to start without a discord account', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-dcgw-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const r = await execa(process.execPath, [LBOT_BIN, '--data-dir', dataDir, 'serve', '--port', '0', '--discord-gateway'], { reject: false });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('no discord platform account');
  });
});
