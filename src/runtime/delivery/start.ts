// The delivery side of `lbot serve`: the reply router feeding the outbox and the worker sending it.
import type { PlatformAccount } from '../../core/delivery/accounts.js';
import { LbotError } from '../../core/errors.js';
import { parseEnvelope } from '../../core/host/event-input.js';
import type { DeliveryStore } from '../../core/stores/delivery-types.js';
import { startEventRun, type EventRouterDeps } from '../server/event-router.js';
import { DiscordGateway } from './discord-gateway.js';
import { TelegramPoller } from './telegram-poll.js';
import { OutboxWorker } from './outbox-worker.js';
import { ReplyRouter } from './reply-router.js';

export type Delivery = { router: ReplyRouter; worker: OutboxWorker; close(): Promise<void> };

export function startDelivery(o: {
  store: DeliveryStore;
  accounts(): readonly PlatformAccount[];
  env: NodeJS.ProcessEnv;
  warn(m: string): void;
  log?(line: string): void;
}): Delivery {
  const worker = new OutboxWorker(o);
  const router = new ReplyRouter({ store: o.store, accounts: o.accounts, warn: o.warn, recorded: () => worker.kick() });
  worker.start();
  return { router, worker, close: () => worker.close() };
}

/** One poller per Telegram account; none configured is a usage error. */
export function startTelegramPolling(o: EventRouterDeps & { env: NodeJS.ProcessEnv; warn(m: string): void; log?(line: string): void }): TelegramPoller[] {
  const accounts = o.config().platforms.filter((a) => a.platform === 'telegram');
  if (accounts.length === 0)
    throw new LbotError('invalid_argument', '--telegram-poll: no telegram platform account is configured', {
      hint: 'lbot platform add NAME --platform telegram --token-env VAR',
    });
  const route = (envelope: unknown, raw: unknown) => startEventRun(o, parseEnvelope(envelope, 'telegram update', o.config().runs.max_event_data_bytes), raw);
  const pollers = accounts.map(
    (account) => new TelegramPoller({ account, stores: o.stores, env: o.env, route, warn: o.warn, ...(o.log ? { log: o.log } : {}) }),
  );
  for (const p of pollers) p.start();
  return pollers;
}

/** One gateway connection per Discord account; none configured is a usage error. */
export function startDiscordGateways(o: EventRouterDeps & { env: NodeJS.ProcessEnv; warn(m: string): void; log?(line: string): void }): DiscordGateway[] {
  const accounts = o.config().platforms.filter((a) => a.platform === 'discord');
  if (accounts.length === 0)
    throw new LbotError('invalid_argument', '--discord-gateway: no discord platform account is configured', {
      hint: 'lbot platform add NAME --platform discord --token-env VAR',
    });
  const route = (envelope: unknown, raw: unknown) => startEventRun(o, parseEnvelope(envelope, 'discord dispatch', o.config().runs.max_event_data_bytes), raw);
  const gateways = accounts.map(
    (account) => new DiscordGateway({ account, stores: o.stores, env: o.env, route, warn: o.warn, ...(o.log ? { log: o.log } : {}) }),
  );
  for (const g of gateways) g.start();
  return gateways;
}
