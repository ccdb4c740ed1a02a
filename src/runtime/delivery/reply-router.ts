// Turns the messages of runs on platform events into outbox rows, recorded as the run delivers them.
import { callbackAnswerDraft, replyRoute, RunReplies, withInteractionToken } from '../../core/delivery/replies.js';
import type { PlatformAccount } from '../../core/delivery/accounts.js';
import type { Delivered } from '../../core/host/result-processor.js';
import type { Binding } from '../../core/protocol/binding.js';
import type { EventEnvelope } from '../../core/protocol/event.js';
import type { DeliveryStore, OutboxDraft } from '../../core/stores/delivery-types.js';

export type ReplyRouterOptions = {
  store: DeliveryStore;
  accounts(): readonly PlatformAccount[];
  /** Called after rows were recorded (the worker sends them). */
  recorded(): void;
  warn(message: string): void;
  nowMs?(): number;
};

export class ReplyRouter {
  readonly #runs = new Map<string, RunReplies | null>();
  readonly #now: () => number;

  constructor(private readonly o: ReplyRouterOptions) {
    this.#now = o.nowMs ?? (() => Date.now());
  }

  started(req: { event: EventEnvelope; binding: Binding }, runId: string): void {
    const route = replyRoute(req.event, req.binding, this.o.accounts());
    const answer = route ? callbackAnswerDraft(route, req.event, runId) : null;
    if (answer) this.#record(runId, [answer]);
  }

  #record(runId: string, drafts: OutboxDraft[]): void {
    try {
      this.o.store.record(drafts, this.#now() / 1000);
      this.o.recorded();
    } catch (err) {
      this.o.warn(`run ${runId}: cannot record its reply in the outbox: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  delivered(req: { event: EventEnvelope; binding: Binding; raw?: unknown }, item: Delivered): void {
    let replies = this.#runs.get(item.run_id);
    if (replies === undefined) {
      const found = replyRoute(req.event, req.binding, this.o.accounts());
      const route = found ? withInteractionToken(found, req.event, req.raw) : null;
      replies = route ? new RunReplies(route, { run_id: item.run_id, event: req.event }) : null;
      this.#runs.set(item.run_id, replies);
    }
    if (!replies) return;
    const drafts = item.type === 'message.delta' ? replies.delta(item.chunk, this.#now()) : replies.completed(item.message);
    if (drafts.length === 0) return;
    this.#record(item.run_id, drafts);
  }

  ended(runId: string): void {
    this.#runs.delete(runId);
  }
}
