// The delivery side of `lbot serve`: the reply router feeding the outbox and the worker sending it.
import type { PlatformAccount } from '../../core/delivery/accounts.js';
import type { DeliveryStore } from '../../core/stores/delivery-types.js';
import { OutboxWorker } from './outbox-worker.js';
import { ReplyRouter } from './reply-router.js';

export type Delivery = { router: ReplyRouter; worker: OutboxWorker; close(): Promise<void> };

export function startDelivery(o: { store: DeliveryStore; accounts(): readonly PlatformAccount[]; env: NodeJS.ProcessEnv; warn(m: string): void; log?(line: string): void }): Delivery {
  const worker = new OutboxWorker(o);
  const router = new ReplyRouter({ store: o.store, accounts: o.accounts, warn: o.warn, recorded: () => worker.kick() });
  worker.start();
  return { router, worker, close: () => worker.close() };
}
