// A real `lbot serve` replying in Telegram: updates made by telegram-test-api (a third-party Bot API
// emulator) arrive over the webhook and the reply lands in the emulator; a reply recorded but not yet
// sent when serve is killed with SIGKILL is delivered exactly once after the restart.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeTelegram } from '../../helpers/fake-platforms.js';
import { startTelegramEmulator } from '../../helpers/telegram-emulator.js';
import { createTempPlugins, type TempPlugins } from '../../helpers/plugins.js';
import { LBOT_BIN, startServe, type ServeProcess } from '../../helpers/serve.js';

const SCRIPTED = 'plugin:acme/scripted/default';
const TOKEN = '4242:test-bot-token';
const SECRET = 'webhook-secret-123';
const say = (text: string) => ({ emit: { type: 'message.completed', data: { message: { role: 'assistant', content: text } } } });
const done = { emit: { type: 'run.completed', data: {} } };

type Fixture = { dataDir: string; plugins: TempPlugins; serve?: ServeProcess; cleanup: Array<() => Promise<unknown>> };
const open: Fixture[] = [];
afterEach(async () => {
  for (const f of open.splice(0)) {
    await f.serve?.stop('SIGKILL').catch(() => undefined);
    for (const c of f.cleanup) await c().catch(() => undefined);
    await rm(f.dataDir, { recursive: true, force: true });
    await f.plugins.cleanup();
  }
});

async function setup(apiBase: string, reply: string): Promise<Fixture> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-tg-'));
  const plugins = await createTempPlugins(['scripted']);
  const config = {
    platforms: [{ name: 'tg', platform: 'telegram', token_env: 'TG_TOKEN', api_base: apiBase }],
    serve: { webhooks: { telegram: { secret_token: SECRET } } },
    bindings: [{ binding_id: 'tg-reply', runner_id: SCRIPTED, runner_config: { script: [say(reply), done] } }],
  };
  await writeFile(path.join(dataDir, 'lbot.config.json'), JSON.stringify(config));
  const f: Fixture = { dataDir, plugins, cleanup: [] };
  open.push(f);
  return f;
}

const serve = async (f: Fixture, args: string[] = []) =>
  (f.serve = await startServe({ dataDir: f.dataDir, pluginsDir: f.plugins.pluginsDir, env: { TG_TOKEN: TOKEN }, args }));

/** What Telegram does with a webhook: POST the update with the secret token header. */
async function deliverUpdate(s: ServeProcess, update: unknown): Promise<Response> {
  return fetch(`${s.url}/v1/webhooks/telegram?bot_id=telegram:tg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
    body: JSON.stringify(update),
  });
}

async function outbox(dataDir: string): Promise<Array<Record<string, unknown>>> {
  const r = await execa(process.execPath, [LBOT_BIN, '--data-dir', dataDir, '--json', 'outbox', 'list']);
  return JSON.parse(r.stdout) as Array<Record<string, unknown>>;
}

describe('Telegram delivery through lbot serve', () => {
  it('an update from telegram-test-api over the webhook gets its reply in the emulator, as a reply to the message', async () => {
    const tg = await startTelegramEmulator();
    const emulator = tg.server;
    const apiUrl = tg.url;
    const f = await setup(apiUrl, 'pong from lbot');
    f.cleanup.push(() => tg.stop());
    const s = await serve(f);

    const client = emulator.getClient(TOKEN, { chatId: 987, userId: 987 });
    await client.sendMessage(client.makeMessage('/ping'));
    const updates = (await (await fetch(`${apiUrl}/bot${TOKEN}/getUpdates`, { method: 'POST' })).json()) as {
      result: Array<{ message: { message_id: number } }>;
    };
    expect(updates.result).toHaveLength(1);
    const accepted = await deliverUpdate(s, updates.result[0]);
    expect(accepted.status).toBe(202);

    await expect.poll(() => emulator.storage.botMessages.length, { timeout: 20_000, interval: 50 }).toBe(1);
    const sent = emulator.storage.botMessages[0]!.message as unknown as Record<string, unknown>;
    expect(sent).toMatchObject({ chat_id: 987, text: 'pong from lbot', reply_parameters: { message_id: updates.result[0]!.message.message_id } });
    const rows = await outbox(f.dataDir);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'delivered', platform: 'telegram', account: 'tg', attempts: 1 });
    const api = await s.request('GET', '/v1/outbox?status=delivered');
    expect((api.json as { items: unknown[] }).items).toHaveLength(1);
    // The token never shows up in what lbot prints or serves.
    expect(JSON.stringify(rows) + api.text + s.stderr()).not.toContain(TOKEN);
  });

  it('kill -9 of serve after the reply was recorded and before Telegram took it: delivered exactly once after restart', async () => {
    const tg = await fakeTelegram(TOKEN);
    const f = await setup(tg.url, 'survives a crash');
    f.cleanup.push(() => tg.close());
    // The first send never gets an answer: serve has recorded the reply and is mid-request when it dies.
    tg.misbehave({ kind: 'hang' });
    const s = await serve(f);
    const update = {
      update_id: 1,
      message: { message_id: 11, date: 1700000000, chat: { id: 555, type: 'private' }, from: { id: 555, is_bot: false, first_name: 'Ann' }, text: 'hi' },
    };
    expect((await deliverUpdate(s, update)).status).toBe(202);
    await expect.poll(() => tg.requests.length, { timeout: 20_000, interval: 50 }).toBe(1);
    const before = (await s.request('GET', '/v1/outbox')).json as { items: Array<Record<string, unknown>> };
    expect(before.items).toMatchObject([{ status: 'sending', attempts: 1 }]);
    await s.stop('SIGKILL');
    expect(tg.sent).toHaveLength(0);

    const again = await serve(f);
    await expect.poll(() => tg.sent.length, { timeout: 20_000, interval: 50 }).toBe(1);
    expect(tg.sent[0]!.body).toMatchObject({ chat_id: 555, text: 'survives a crash', reply_parameters: { message_id: 11 } });
    const rows = (await again.request('GET', '/v1/outbox')).json as { items: Array<Record<string, unknown>> };
    expect(rows.items).toMatchObject([{ status: 'delivered', attempts: 2 }]);
    // The run was not repeated: one run, one reply. Wait past a few worker polls to be sure nothing else goes out.
    const runs = (await again.request('GET', '/v1/runs')).json as { items: unknown[] };
    expect(runs.items).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 2500));
    expect(tg.sent).toHaveLength(1);
    expect(again.stderr()).toContain('resuming 1 message');
  });

  it('--telegram-poll: an update from telegram-test-api is fetched by getUpdates and answered in the emulator', async () => {
    const tg = await startTelegramEmulator();
    const f = await setup(tg.url, 'polled pong');
    f.cleanup.push(() => tg.stop());
    await serve(f, ['--telegram-poll']);
    const client = tg.server.getClient(TOKEN, { chatId: 321, userId: 321 });
    await client.sendMessage(client.makeMessage('hello over polling'));
    await expect.poll(() => tg.server.storage.botMessages.length, { timeout: 20_000, interval: 50 }).toBe(1);
    expect(tg.server.storage.botMessages[0]!.message as unknown as Record<string, unknown>).toMatchObject({ chat_id: 321, text: 'polled pong' });
  });

  it('--telegram-poll survives kill -9 and restart: the offset is kept, no update is run twice', async () => {
    const tg = await fakeTelegram(TOKEN);
    const f = await setup(tg.url, 'ack');
    f.cleanup.push(() => tg.close());
    const update = (id: number, text: string) => ({
      message: { message_id: id, date: 1700000000, chat: { id: 77, type: 'private' }, from: { id: 77, is_bot: false, first_name: 'Bo' }, text },
    });
    tg.push(update(1, 'first'));
    const s = await serve(f, ['--telegram-poll']);
    await expect.poll(() => tg.sent.length, { timeout: 20_000, interval: 50 }).toBe(1);
    // The offset that confirms update 500 is stored once the run has it.
    await expect.poll(() => tg.getUpdatesCalls().some((c) => c.offset === 501), { timeout: 20_000, interval: 50 }).toBe(true);
    // Killed only once the first reply is recorded as delivered: a kill between Telegram taking it and the record
    // would send it again after the restart (Telegram has no idempotency key: that window is at least once), not this test.
    await expect.poll(async () => (await outbox(f.dataDir)).map((m) => m.status), { timeout: 20_000, interval: 100 }).toEqual(['delivered']);
    await s.stop('SIGKILL');

    tg.push(update(2, 'second'));
    const callsBefore = tg.getUpdatesCalls().length;
    const again = await serve(f, ['--telegram-poll']);
    await expect.poll(() => tg.sent.length, { timeout: 20_000, interval: 50 }).toBe(2);
    // The restarted serve asked from the stored offset, so update 500 was never handed out again.
    const after = tg.getUpdatesCalls().slice(callsBefore);
    expect(after.length).toBeGreaterThan(0);
    expect(after.map((c) => c.offset)).toEqual(after.map(() => expect.any(Number)));
    expect(after.every((c) => typeof c.offset === 'number' && c.offset >= 501)).toBe(true);
    // The second reply can leave before its run is listed as ended: wait for both runs.
    const conversations = async () =>
      ((await again.request('GET', '/v1/runs')).json as { items: Array<{ conversation_id: string }> }).items.map((r) => r.conversation_id);
    await expect.poll(conversations, { timeout: 20_000, interval: 100 }).toEqual(['telegram:chat:77', 'telegram:chat:77']);
    expect(tg.sent.map((m) => m.body.reply_parameters)).toEqual([
      { message_id: 1, allow_sending_without_reply: true },
      { message_id: 2, allow_sending_without_reply: true },
    ]);
  });

  it('a button press (callback_query) is answered at once with answerCallbackQuery; the reply follows in the chat', async () => {
    const tg = await fakeTelegram(TOKEN);
    const f = await setup(tg.url, 'you pressed a');
    f.cleanup.push(() => tg.close());
    const config = {
      platforms: [{ name: 'tg', platform: 'telegram', token_env: 'TG_TOKEN', api_base: tg.url }],
      serve: { webhooks: { telegram: { secret_token: SECRET } } },
      bindings: [
        { binding_id: 'tg-reply', runner_id: SCRIPTED, event_types: ['interaction.invoked'], runner_config: { script: [say('you pressed a'), done] } },
      ],
    };
    await writeFile(path.join(f.dataDir, 'lbot.config.json'), JSON.stringify(config));
    const s = await serve(f);
    const update: unknown = JSON.parse(readFileSync(new URL('../../../fixtures/platform/telegram/callback_query.nutgram.json', import.meta.url), 'utf8'));
    expect((await deliverUpdate(s, update)).status).toBe(202);
    await expect.poll(() => tg.sent.length, { timeout: 20_000, interval: 50 }).toBe(2);
    expect(tg.sent.map((m) => [m.path.split('/').pop(), m.body])).toEqual([
      ['answerCallbackQuery', { callback_query_id: '666728699048485871' }],
      [
        'sendMessage',
        expect.objectContaining({ chat_id: 222222222, text: 'you pressed a', reply_parameters: { message_id: 69587, allow_sending_without_reply: true } }),
      ],
    ]);
  });

  it('--telegram-poll with no telegram account refuses to start', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-tg-'));
    open.push({ dataDir, plugins: await createTempPlugins([]), cleanup: [] });
    const r = await execa(process.execPath, [LBOT_BIN, '--data-dir', dataDir, 'serve', '--port', '0', '--telegram-poll'], { reject: false });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('no telegram platform account');
  });
});
