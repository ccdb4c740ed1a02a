// The Discord gateway client against a local fake gateway that checks the opcodes: identify, heartbeats
// with the last sequence, resume after op 7, a dropped socket and a zombie connection, identify afresh
// after a non-resumable invalid session, and no reconnect loop on a refused token.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatformAccountSchema } from '../../../src/core/delivery/accounts.js';
import type { EventEnvelope } from '../../../src/core/protocol/event.js';
import { openSqliteStores, type SqliteStores } from '../../../src/core/stores/sqlite/open.js';
import { DiscordGateway } from '../../../src/runtime/delivery/discord-gateway.js';
import { BOT_USER_ID, messageCreate, startFakeGateway, type FakeGateway } from '../../helpers/fake-discord-gateway.js';

const TOKEN = 'discord-bot-token';
type Ctx = { fake: FakeGateway; gw: DiscordGateway; stores: SqliteStores; dir: string; routed: EventEnvelope[]; warnings: string[] };
const open: Ctx[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) {
    await c.gw.close();
    await c.fake.close();
    c.stores.close();
    await rm(c.dir, { recursive: true, force: true });
  }
});

async function setup(opts: { token?: string; heartbeatMs?: number } = {}): Promise<Ctx> {
  const fake = await startFakeGateway({ token: TOKEN, heartbeatMs: opts.heartbeatMs ?? 60_000 });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lbot-dcgw-'));
  const stores = openSqliteStores(dir);
  const routed: EventEnvelope[] = [];
  const warnings: string[] = [];
  const account = PlatformAccountSchema.parse({ name: 'dc', platform: 'discord', token_env: 'DC_TOKEN', api_base: fake.apiBase });
  const gw = new DiscordGateway({
    account,
    stores,
    env: { DC_TOKEN: opts.token ?? TOKEN },
    route: async (e) => {
      routed.push(e as EventEnvelope);
      return `run-${routed.length}`;
    },
    warn: (m) => warnings.push(m),
  });
  gw.start();
  const c = { fake, gw, stores, dir, routed, warnings };
  open.push(c);
  return c;
}

const ops = (c: Ctx, conn?: number) => c.fake.received.filter((r) => conn === undefined || r.conn === conn).map((r) => r.op);
const ready = (c: Ctx) => expect.poll(() => c.fake.received.some((r) => r.op === 2 || r.op === 6), { timeout: 10_000, interval: 10 }).toBe(true);

describe('Discord gateway client', () => {
  it('identifies with the token and MESSAGE_CONTENT intents, heartbeats with the last sequence, and routes MESSAGE_CREATE', async () => {
    const c = await setup({ heartbeatMs: 200 });
    await ready(c);
    const identify = c.fake.received.find((r) => r.op === 2)!;
    expect(identify.d).toMatchObject({ token: TOKEN, properties: { browser: 'lbot', device: 'lbot' } });
    c.fake.dispatch('MESSAGE_CREATE', messageCreate('1600000000000000001', 'hello bot'));
    // The bot's own replies and other bots' messages never start a run.
    c.fake.dispatch('MESSAGE_CREATE', messageCreate('1600000000000000002', 'my own reply', { id: BOT_USER_ID }));
    c.fake.dispatch('MESSAGE_CREATE', messageCreate('1600000000000000003', 'another bot', { id: '1700000000000000001', bot: true }));
    c.fake.dispatch('GUILD_CREATE', { id: '1500000000000000001' });
    await expect.poll(() => c.routed.length, { timeout: 10_000, interval: 10 }).toBe(1);
    expect(c.routed[0]).toMatchObject({
      event_type: 'message.received',
      bot_id: 'discord:dc',
      input: { text: 'hello bot' },
      delivery: { reply_target: { channel_id: '1400000000000000001', message_id: '1600000000000000001' } },
    });
    // Heartbeats keep coming, each ACKed; the fake checked every d against the sequences it sent.
    // (How many connections that took is not asserted: a loaded test machine can stall past an ACK.)
    await expect.poll(() => ops(c).filter((o) => o === 1).length, { timeout: 10_000, interval: 10 }).toBeGreaterThanOrEqual(2);
    expect(c.fake.received.filter((r) => r.op === 1).some((r) => typeof r.d === 'number' && r.d >= 2)).toBe(true);
    expect(c.fake.violations).toEqual([]);
  });

  it('resumes after op 7 and after a dropped socket: missed dispatches are replayed and routed once, in order', async () => {
    const c = await setup();
    await ready(c);
    c.fake.dispatch('MESSAGE_CREATE', messageCreate('1600000000000000011', 'one'));
    await expect.poll(() => c.routed.length, { timeout: 10_000, interval: 10 }).toBe(1);
    c.fake.reconnect();
    await expect.poll(() => c.fake.connections(), { timeout: 10_000, interval: 10 }).toBe(2);
    await expect.poll(() => ops(c, 2), { timeout: 10_000, interval: 10 }).toContain(6);
    expect(c.fake.received.find((r) => r.op === 6)!.d).toMatchObject({ token: TOKEN, session_id: 'sess-1', seq: 2 });
    c.fake.drop();
    // Sent while the client is away: the resume replays them.
    c.fake.dispatch('MESSAGE_CREATE', messageCreate('1600000000000000012', 'two'));
    c.fake.dispatch('MESSAGE_CREATE', messageCreate('1600000000000000013', 'three'));
    await expect.poll(() => c.routed.map((e) => e.input.text), { timeout: 10_000, interval: 10 }).toEqual(['one', 'two', 'three']);
    expect(ops(c).filter((o) => o === 2)).toHaveLength(1);
    expect(c.fake.violations).toEqual([]);
  });

  it('a connection whose heartbeats are not ACKed is dropped and resumed', async () => {
    const c = await setup({ heartbeatMs: 30 });
    await ready(c);
    c.fake.holdAcks(true);
    await expect.poll(() => c.fake.connections(), { timeout: 10_000, interval: 10 }).toBeGreaterThanOrEqual(2);
    c.fake.holdAcks(false);
    await expect.poll(() => ops(c).filter((o) => o === 6).length, { timeout: 10_000, interval: 10 }).toBeGreaterThanOrEqual(1);
    expect(c.fake.violations).toEqual([]);
  });

  it('identifies afresh after a non-resumable invalid session', async () => {
    const c = await setup();
    await ready(c);
    c.fake.invalidSession(false);
    await expect.poll(() => ops(c).filter((o) => o === 2).length, { timeout: 10_000, interval: 10 }).toBe(2);
    expect(ops(c)).not.toContain(6);
    expect(c.fake.violations).toEqual([]);
  });

  it('a refused token stops the client with a warning instead of reconnecting', async () => {
    const c = await setup({ token: 'bad-token-xyz' });
    // GET /gateway/bot refuses the wrong token before any socket is opened.
    await expect.poll(() => c.warnings.join('\n'), { timeout: 10_000, interval: 10 }).toMatch(/401.*not reconnecting/);
    expect(c.fake.connections()).toBe(0);
    expect(c.warnings.join('\n')).not.toContain('bad-token-xyz');
  });
});
